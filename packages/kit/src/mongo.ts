import mongoose from 'mongoose';
import type { Logger } from './logger';

export interface MongoOptions {
  url: string;
  dbName?: string;
  log: Logger;
  /** How long to keep trying at start before giving up (the orchestrator restarts us then). */
  startTimeoutMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Connects the process's mongoose to MongoDB, retrying with backoff at start.
 * After that the driver reconnects by itself; `/readyz` reads `isMongoReady()`.
 */
export async function connectMongo({ url, dbName, log, startTimeoutMs = 60_000 }: MongoOptions): Promise<typeof mongoose> {
  mongoose.set('strictQuery', true);
  const deadline = Date.now() + startTimeoutMs;
  let delay = 250;
  for (;;) {
    try {
      // Collections come with their first write or index (ensureIndexes): mongoose's own creation
      // at connect raced the index build ("already exists") on the development server.
      await mongoose.connect(url, { dbName, serverSelectionTimeoutMS: 5_000, autoIndex: false, autoCreate: false });
      log.info({ dbName: mongoose.connection.name }, 'mongo connected');
      mongoose.connection.on('disconnected', () => log.warn('mongo disconnected'));
      mongoose.connection.on('reconnected', () => log.info('mongo reconnected'));
      return mongoose;
    } catch (err) {
      if (Date.now() + delay > deadline) throw err;
      log.warn({ err, retryInMs: delay }, 'mongo not reachable yet');
      await sleep(delay);
      delay = Math.min(delay * 2, 5_000);
    }
  }
}

/** Any of a service's models (their document types differ; the plumbing does not care). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyModel = mongoose.Model<any>;

export function isMongoReady(): boolean {
  return mongoose.connection.readyState === mongoose.ConnectionStates.connected;
}

/** Builds the indexes (unique keys above all) of every model before traffic is accepted. */
export async function ensureIndexes(models: AnyModel[]): Promise<void> {
  for (const model of models) await model.createIndexes();
}

export async function disconnectMongo(): Promise<void> {
  await mongoose.disconnect();
}

/** Every record is found by either its id or its referenceId (DESIGN §5). */
export function byIdOrReference(key: string): Record<string, unknown> {
  return { $or: [{ _id: key }, { referenceId: key }] };
}
