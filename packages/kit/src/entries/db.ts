/**
 * `@mkt/kit/db`: MongoDB — a service's own connection and its models' indexes, paged listings,
 * migrations, idempotent requests and windowed counters.
 */
export {
  type Attempt,
  IDEMPOTENCY_LEASE_MS,
  type IdempotencyRecordDoc,
  idempotencyRecordSchema,
  IdempotentRequestInFlight,
  IdempotentRequests,
  requestFingerprint,
  type StoredResponse,
} from '../idempotency';
export { indexBuildMigration, indexesMigration, type IndexSpec, type Migration, Migrator } from '../migrations';
export {
  byIdOrReference,
  closeDatabase,
  createDatabase,
  type Database,
  ensureIndexes,
  isDatabaseReady,
  mongoTlsOptions,
  openDatabase,
} from '../mongo';
export { findPage, type Page } from '../paging';
export { WindowedCounter, type WindowedCounterDoc, windowedCounterSchema } from '../windowed-counter';
