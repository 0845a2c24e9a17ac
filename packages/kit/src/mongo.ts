import mongoose from 'mongoose';
import type { Logger } from './logger';

/**
 * A service's database: one mongoose connection of its own, made by the composition before it
 * connects. Models are bound to it (`db.model(name, schema, collection)`), never to mongoose's
 * process-global connection, so two services in one process (a test of the two together) use two
 * databases and a repository is given the models it may use.
 */
export type Database = mongoose.Connection;

/** Any of a service's models (their document types differ; the plumbing does not care). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyModel = mongoose.Model<any>;

export interface OpenDatabaseOptions {
  url: string;
  dbName?: string;
  log: Logger;
  /** How long to keep trying at start before giving up (the orchestrator restarts us then). */
  startTimeoutMs?: number;
}

/** Options of every service connection (the driver reconnects by itself after the first open). */
const CONNECTION_OPTIONS = {
  serverSelectionTimeoutMS: 5_000,
  // Collections come with their first write or index (ensureIndexes): mongoose's own creation at
  // connect raced the index build ("already exists") on the development server.
  autoIndex: false,
  autoCreate: false,
} as const;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A database handle not yet open: bind the models to it, then `openDatabase` (the runtime does). */
export function createDatabase(): Database {
  const db = mongoose.createConnection();
  db.set('strictQuery', true);
  return db;
}

/**
 * Opens `db`, retrying with backoff at start. After that the driver reconnects by itself;
 * `/readyz` reads `isDatabaseReady(db)`.
 */
export async function openDatabase(db: Database, { url, dbName, log, startTimeoutMs = 60_000 }: OpenDatabaseOptions): Promise<Database> {
  const deadline = Date.now() + startTimeoutMs;
  let delay = 250;
  for (;;) {
    try {
      await db.openUri(url, { dbName, ...CONNECTION_OPTIONS });
      log.info({ dbName: db.name }, 'mongo connected');
      db.on('disconnected', () => log.warn('mongo disconnected'));
      db.on('reconnected', () => log.info('mongo reconnected'));
      return db;
    } catch (err) {
      if (Date.now() + delay > deadline) throw err;
      log.warn({ err, retryInMs: delay }, 'mongo not reachable yet');
      await sleep(delay);
      delay = Math.min(delay * 2, 5_000);
    }
  }
}

export function isDatabaseReady(db: Database): boolean {
  return db.readyState === mongoose.ConnectionStates.connected;
}

export async function closeDatabase(db: Database): Promise<void> {
  await db.close();
}

/** Builds the indexes (unique keys above all) of every model before traffic is accepted. */
export async function ensureIndexes(models: AnyModel[]): Promise<void> {
  for (const model of models) await model.createIndexes();
}

/** Every record is found by either its id or its referenceId (ADR 0004). */
export function byIdOrReference(key: string): Record<string, unknown> {
  return { $or: [{ _id: key }, { referenceId: key }] };
}
