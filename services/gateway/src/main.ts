import './tracing';
import { bufferedStdout, createLogger } from '@mkt/kit/logger';
import { startService } from '@mkt/kit/runtime';
import { gatewayService } from './composition';
import { loadConfig } from './config';

function main(): void {
  const config = loadConfig();
  // Log lines are buffered (up to 4 KiB, at most 250 ms) and written off the request path:
  // a synchronous write per request cost the hot path more than the proxying (bench/README.md).
  // What is buffered is written synchronously when the process exits.
  const destination = bufferedStdout();
  // The shared start (database, indexes, the admin seeded by `beforeListen`, then the port),
  // with its handlers of a failed start and of an unhandled rejection.
  startService(gatewayService(config, createLogger('gateway', config.LOG_LEVEL, destination)).definition);
}

main();
