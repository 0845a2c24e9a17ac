/**
 * `@mkt/kit/runtime`: a service's process — its configuration, the runtime made at composition
 * (database, bus, outbox relay, access keys), starting and stopping it, jobs and shutdown.
 */
export { parseConfig, pemFromEnv, serviceEnv } from '../config';
export {
  createRuntime,
  periodicJob,
  type Runtime,
  type ServiceDefinition,
  startComponent,
  type StartedRuntime,
  startMigrations,
  startService,
  stopRuntime,
} from '../runtime';
