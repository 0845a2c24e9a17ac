import mongoose from 'mongoose';
import { DEFAULT_MONGO_SOCKET_TIMEOUT_MS, readCaFile } from './config';
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
  /**
   * MONGO_SOCKET_TIMEOUT_MS: how long a command's connection may stay silent (30 s unless said);
   * 0: no limit, for a one-shot job whose commands run long (a migration, a rebuild).
   */
  socketTimeoutMs?: number;
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

/*
 * `socketTimeoutMS` (driver 6, as mongoose 8 passes it): while a command waits for its answer,
 * the connection's socket may stay silent that long; then the driver destroys that connection
 * (the pool and the server's state are left alone: a timeout after the handshake does not mark
 * the server down) and fails the command with a MongoNetworkTimeoutError. The command may have
 * run: like any network error it is retried once by retryable reads (any server) and retryable
 * writes (a replica set or a sharded cluster; a standalone server retries no write), the write
 * under the same transaction number, so applied once — a hung command costs up to twice the
 * timeout. The servers' monitoring connections use `connectTimeoutMS`, not this. A serving
 * process sends no change stream, tailable cursor or long aggregation; index builds and
 * whole-collection updates run in the migrate command (and the CRM rebuild builds its indexes),
 * which turn it off. A sweep's read that scans a large collection before its first batch (the
 * consultation's backfill of `owed`, over every given-up booking) could stay silent that long on
 * a big, slow server: it fails then, is logged, and is tried again at the next sweep.
 */
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
  { url, dbName, log, startTimeoutMs = 60_000, tlsCaFile, socketTimeoutMs = DEFAULT_MONGO_SOCKET_TIMEOUT_MS }: OpenDatabaseOptions,
): Promise<Database> {
  // A configuration error stops the start at once (no retry cures it).
  const tls = mongoTlsOptions(url, tlsCaFile);
  const deadline = Date.now() + startTimeoutMs;
  let delay = 250;
  for (;;) {
    try {
      await db.openUri(url, { dbName, ...CONNECTION_OPTIONS, socketTimeoutMS: socketTimeoutMs, ...tls });
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
