import mongoose from 'mongoose';
import { readCaFile } from './config';
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
  /** MONGO_TLS_CA_FILE: the CA the server's certificate is verified against (TLS on). */
  tlsCaFile?: string;
}

/** The driver's TLS options kit passes (nothing for a plain connection). */
export interface MongoTlsOptions {
  tls?: true;
  tlsCAFile?: string;
}

/** URL options that would accept a certificate without verifying it: refused. */
const UNVERIFIED = ['tlsInsecure', 'tlsAllowInvalidCertificates', 'tlsAllowInvalidHostnames'];

/**
 * The TLS options of a connection to `url`: with `caFile` (checked readable now), TLS verified
 * against that CA; without, what the URL says (`tls=true`: the system's CAs). The server's
 * certificate is always verified: a URL that turns verification off, or that says `tls=false`
 * while a CA file is set, is a configuration error.
 */
export function mongoTlsOptions(url: string, caFile?: string): MongoTlsOptions {
  const query = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
  const truthy = (name: string) =>
    [...query.entries()].some(([key, value]) => key.toLowerCase() === name.toLowerCase() && value.toLowerCase() === 'true');
  const falsy = (name: string) =>
    [...query.entries()].some(([key, value]) => key.toLowerCase() === name.toLowerCase() && value.toLowerCase() === 'false');
  const unverified = UNVERIFIED.find(truthy);
  if (unverified) throw new Error(`MONGO_URL: ${unverified}=true turns certificate verification off; it is refused`);
  if (!caFile) return {};
  if (falsy('tls') || falsy('ssl')) throw new Error('MONGO_TLS_CA_FILE is set but MONGO_URL says tls=false');
  readCaFile('MONGO_TLS_CA_FILE', caFile);
  return { tls: true, tlsCAFile: caFile };
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
export async function openDatabase(
  db: Database,
  { url, dbName, log, startTimeoutMs = 60_000, tlsCaFile }: OpenDatabaseOptions,
): Promise<Database> {
  // A configuration error stops the start at once (no retry cures it).
  const tls = mongoTlsOptions(url, tlsCaFile);
  const deadline = Date.now() + startTimeoutMs;
  let delay = 250;
  for (;;) {
    try {
      await db.openUri(url, { dbName, ...CONNECTION_OPTIONS, ...tls });
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
