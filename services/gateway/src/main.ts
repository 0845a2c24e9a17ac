import './tracing';
import pino from 'pino';
import { createLogger, ensureIndexes, openDatabase, runService } from '@mkt/kit';
import { gatewayService } from './composition';
import { loadConfig } from './config';

async function main(): Promise<void> {
  const config = loadConfig();
  // Log lines are buffered (up to 4 KiB, at most 250 ms) and written off the request path:
  // a synchronous write per request cost the hot path more than the proxying (bench/README.md).
  // What is buffered is written synchronously when the process exits.
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), 250).unref();
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // Nothing more can be done for a log line at exit.
    }
  });
  const log = createLogger('gateway', config.LOG_LEVEL, destination);
  const gateway = gatewayService(config, log);
  // The admin exists before the port opens: no request can race its creation.
  await openDatabase(gateway.definition.runtime.db, { url: config.MONGO_URL, dbName: config.MONGO_DB ?? 'gateway', log });
  await ensureIndexes(gateway.definition.models);
  await gateway.seedAdmin();
  await runService(gateway.definition);
}

main().catch((err: unknown) => {
  createLogger('gateway').fatal({ err }, 'could not start');
  process.exit(1);
});
