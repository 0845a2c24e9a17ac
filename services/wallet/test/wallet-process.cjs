// A wallet in a process of its own, as a test's victim: composed from the build (dist/) the way
// main.ts composes it, on the database TEST_DB_NAME, without its sweeps (the test recovers).
// Prints `url <address>` once it listens; a SIGKILL is how it ends.
const pino = require('pino');
const { startComponent } = require('@mkt/kit/runtime');
const { walletService } = require('../dist/composition.js');
const { loadConfig } = require('../dist/config.js');

startComponent(walletService(loadConfig(process.env), pino({ level: 'silent' })).definition, process.env.TEST_DB_NAME).then(
  (started) => process.stdout.write(`url ${started.url}\n`),
  (err) => {
    process.stderr.write(`${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
