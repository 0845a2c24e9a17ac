#!/usr/bin/env node
// Moves every consuming, retry and dead-letter queue of the services to the arguments this
// version declares (classic → quorum queues, docs/rabbitmq-queues.md), over the AMQP
// connection only, without losing a message or an event published meanwhile. Idempotent: a
// queue already declared as planned is left alone, and an interrupted run is finished by the next.
//
//   node scripts/migrate-queues.mjs [service...] [--list] [--wait-ms N] [--json]
//
// Needs the built services (`pnpm build`). AMQP_URL names the broker (default
// amqp://guest:guest@127.0.0.1:5672; an amqps:// one verified against AMQP_TLS_CA_FILE as the
// services do), BUS_NAMESPACE the names' prefix (empty in production).
// `--list` prints the planned queues and changes nothing. `--wait-ms` is how long a queue may
// keep consumers of the previous version before the run gives up (default 60000).
import { createRequire } from 'node:module';
import { URL, fileURLToPath } from 'node:url';
import { amqplib, amqpTls } from './lib/deps.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const requireFrom = (pkg) => createRequire(`${root}${pkg}/package.json`);
const amqp = amqplib(root);
const fromKit = requireFrom('packages/kit');
/** kit's public areas (its exports map): the bus topology and the logger. */
const kit = { ...fromKit('@mkt/kit/bus'), ...fromKit('@mkt/kit/logger') };

const SERVICES = ['wallet', 'catalog', 'crm', 'consultation', 'review'];
const USAGE = `usage: node scripts/migrate-queues.mjs [${SERVICES.join('|')}...] [--list] [--wait-ms N] [--json]`;

function parseArgs(argv) {
  const options = { services: /** @type {string[]} */ ([]), list: false, json: false, waitMs: 60_000, help: false };
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--help' || argv[i] === '-h') options.help = true;
    else if (argv[i] === '--list') options.list = true;
    else if (argv[i] === '--json') options.json = true;
    else if (argv[i] === '--wait-ms') options.waitMs = Number(argv[++i]);
    else if (SERVICES.includes(argv[i])) options.services.push(argv[i]);
    else throw new Error(`unknown argument ${argv[i]}\n${USAGE}`);
  }
  if (!(options.waitMs >= 0)) throw new Error(`--wait-ms must be a number of milliseconds\n${USAGE}`);
  if (options.services.length === 0) options.services = SERVICES;
  return options;
}

/**
 * The consumers each service's composition registers (the same objects `runService` starts), so
 * the plan is always this version's. A configuration that only has to parse is enough: nothing
 * connects to the database.
 */
function consumersOf(service) {
  const load = requireFrom(`services/${service}`);
  const { loadConfig } = load('./dist/config.js');
  const composition = load('./dist/composition.js');
  const make = composition[`${service}Service`];
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'development',
    MONGO_URL: process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27017',
    AMQP_URL: process.env.AMQP_URL ?? 'amqp://127.0.0.1',
    JWT_PUBLIC_KEY: process.env.JWT_PUBLIC_KEY ?? 'not used to plan queues',
  });
  // Every composition answers `{ definition, parts }`: the definition's consumers are what starts.
  return make(config, kit.createLogger(service, 'silent')).definition.consumers ?? [];
}

function plansOf(services, names) {
  return services.flatMap((service) =>
    consumersOf(service).flatMap((spec) =>
      kit.consumerQueuePlan(
        names.of(spec.subscription.queue),
        [...spec.subscription.events],
        spec.retryDelaysMs ?? kit.DEFAULT_RETRY_DELAYS_MS,
        names,
      ),
    ),
  );
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const names = new kit.BusNames(process.env.BUS_NAMESPACE ?? '');
  const plans = plansOf(options.services, names);
  const print = (line) => process.stdout.write(`${line}\n`);
  if (options.list) {
    if (options.json) print(JSON.stringify(plans));
    else for (const plan of plans) print(`${plan.name} ${JSON.stringify(plan.arguments)}`);
    return;
  }
  const url = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
  const connection = await amqp.connect(url, amqpTls(root, url));
  const results = [];
  try {
    const channel = await connection.createChannel();
    await kit.assertExchanges(channel, names);
    await channel.close();
    for (const plan of plans) {
      const result = await kit.migrateQueue(connection, plan, { consumersGoneTimeoutMs: options.waitMs });
      results.push(result);
      if (!options.json) print(`${result.queue}: ${result.outcome}${result.moved ? `, ${result.moved} message(s) moved` : ''}`);
    }
  } finally {
    await connection.close().catch(() => undefined);
  }
  if (options.json) print(JSON.stringify(results));
}

main().catch((err) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
