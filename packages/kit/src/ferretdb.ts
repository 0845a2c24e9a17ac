import mongoose from 'mongoose';

/**
 * FerretDB 1.x runs an update as a query followed by a write, outside any transaction
 * (internal/handler/msg_update.go: `c.Query` then `common.UpdateDocument`), so two concurrent
 * conditional updates of one document can both pass their guard and one write overwrites the
 * other (measured: 50 concurrent `$inc`s of one document kept 2). MongoDB applies a
 * single-document update atomically, which every guard in this code base relies on.
 *
 * Against FerretDB (development and tests), writes to a collection are therefore run one at a
 * time within the process. That restores the guarantees for one process per database — how
 * `npm start` and the tests run; several replicas of a service need MongoDB, as production has.
 */
const WRITE_METHODS = [
  'updateOne',
  'updateMany',
  'replaceOne',
  'deleteOne',
  'deleteMany',
  'findOneAndUpdate',
  'findOneAndDelete',
  'findOneAndReplace',
  'bulkWrite',
] as const;

const tails = new Map<string, Promise<unknown>>();
let installed = false;

function oneAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
  const run = (tails.get(key) ?? Promise.resolve()).then(work, work);
  const tail = run.catch(() => undefined);
  tails.set(key, tail);
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return run;
}

export function serializeWritesPerCollection(): void {
  if (installed) return;
  installed = true;
  const proto = mongoose.mongo.Collection.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of WRITE_METHODS) {
    const original = proto[name]!;
    proto[name] = function (this: { dbName: string; collectionName: string }, ...args: unknown[]) {
      return oneAtATime(`${this.dbName}.${this.collectionName}`, () => original.apply(this, args));
    };
  }
}

/** True when the server is FerretDB (its buildInfo says so). */
export async function isFerretDb(connection: mongoose.Connection): Promise<boolean> {
  const info = await connection.db!.admin().command({ buildInfo: 1 });
  return typeof info.ferretdbVersion === 'string';
}
