import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { mongo, Schema, type Model } from 'mongoose';
import { isDuplicateKey } from './errors';

/**
 * One counter per key and window: the key names its window (`u1:daily:2026-11-21`), so a new
 * window is a new document and no counter is ever reset in place. `expiresAt` is the window's
 * end, for the sweep (the development server enforces no TTL index).
 */
export interface WindowedCounterDoc {
  _id: string;
  count: number;
  expiresAt: Date;
}

/** The schema of a service's counter collection: `mongoose.model(name, windowedCounterSchema(), collection)`. */
export function windowedCounterSchema(): Schema<WindowedCounterDoc> {
  return new Schema<WindowedCounterDoc>(
    {
      _id: { type: String, required: true },
      count: { type: Number, required: true },
      expiresAt: { type: Date, required: true, index: true },
    },
    { versionKey: false },
  );
}

/**
 * Places in a window, taken atomically across instances: the guard `count < limit` is in the
 * filter of an upsert, so a full counter does not match and the upsert collides with it on
 * `_id` — the refusal. A refused take changes nothing.
 */
interface QueuedTake {
  key: string;
  limit: number;
  endsAt: Date;
  places: number;
  resolve: (count: number | null) => void;
  reject: (err: unknown) => void;
}

export class WindowedCounter {
  /** Takes asked with `takeSoon` in this turn of the event loop, sent together after it. */
  private queued: QueuedTake[] = [];

  constructor(private readonly model: Model<WindowedCounterDoc>) {}

  /** The driver's collection: the filters and updates are of the stored types, and only `count` is read back. */
  private get counters(): mongo.Collection<WindowedCounterDoc> {
    return this.model.collection as unknown as mongo.Collection<WindowedCounterDoc>;
  }

  /** Takes one place of `key` if fewer than `limit` are taken; `endsAt` is the window's end. */
  async take(key: string, limit: number, endsAt: Date): Promise<boolean> {
    return (await this.takeCounting(key, limit, endsAt)) !== null;
  }

  /**
   * Takes `places` places of `key` at once if that many are free (a batch one instance hands out
   * itself), answering the places taken in the window with these (for a `RateLimit` header's
   * `remaining`), or null when they were not free — then nothing is taken. One guarded upsert.
   */
  async takeCounting(key: string, limit: number, endsAt: Date, places = 1): Promise<number | null> {
    if (limit <= 0 || places > limit) return null;
    const guard = { _id: key, count: { $lte: limit - places } };
    const projection = { count: 1 };
    // The driver's collection, not the model: the filter and update are already of the stored
    // types and only `count` is read back, so mongoose's casting and document hydration would
    // be pure cost — on the gateway this runs for every lease of every rate limit.
    const counters = this.counters;
    try {
      const taken = await counters.findOneAndUpdate(
        guard,
        { $inc: { count: places }, $setOnInsert: { expiresAt: endsAt } },
        { upsert: true, returnDocument: 'after', projection },
      );
      return taken?.count ?? places;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    return this.takeExisting(key, limit, places);
  }

  /**
   * After a guarded upsert collided on `_id`, the counter exists: it is full, or another first
   * take created it between our match and our insert. The same guard, without the upsert, tells which.
   */
  private async takeExisting(key: string, limit: number, places: number): Promise<number | null> {
    const retried = await this.counters.findOneAndUpdate(
      { _id: key, count: { $lte: limit - places } },
      { $inc: { count: places } },
      { returnDocument: 'after', projection: { count: 1 } },
    );
    return retried?.count ?? null;
  }

  /**
   * `takeCounting`, with the takes asked in the same turn of the event loop (many new keys at
   * once: a crowd of new clients of a rate limit) sent together once the turn is over: one bulk
   * write of the same guarded upserts, unordered, then one read of the counts of the counters
   * that already existed (a counter this write created holds exactly its `places`). Each take is
   * still its own guarded upsert, so a full counter refuses it and a refused take changes nothing;
   * a count read after the write may include places other instances took meanwhile (a
   * `RateLimit` header's `remaining` then errs low). A take alone in its turn is `takeCounting`.
   */
  takeSoon(key: string, limit: number, endsAt: Date, places = 1): Promise<number | null> {
    if (limit <= 0 || places > limit) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      if (this.queued.length === 0) setImmediate(() => this.flush());
      this.queued.push({ key, limit, endsAt, places, resolve, reject });
    });
  }

  /**
   * Runs under the root context: the batch serves every caller queued in this turn, and the
   * immediate that flushes it would otherwise carry the first caller's trace context.
   */
  private flush(): void {
    context.with(ROOT_CONTEXT, () => {
      const batch = this.queued;
      this.queued = [];
      if (batch.length === 1) {
        const [take] = batch as [QueuedTake];
        this.takeCounting(take.key, take.limit, take.endsAt, take.places).then(take.resolve, take.reject);
        return;
      }
      this.takeAll(batch).catch((err: unknown) => {
        for (const take of batch) take.reject(err);
      });
    });
  }

  /**
   * The batch's bulk write, then each take answered from its own op's outcome. A take is granted
   * only when the outcome of every op of the batch is known: a failure of the write as a whole (a
   * network error, a server or write-concern error) leaves the ops' outcomes unknown, so every
   * take of the batch is rejected with that error — as the single take's `takeCounting` throws it.
   */
  private async takeAll(batch: QueuedTake[]): Promise<void> {
    const writes = batch.map(({ key, limit, endsAt, places }) => ({
      updateOne: {
        filter: { _id: key, count: { $lte: limit - places } },
        update: { $inc: { count: places }, $setOnInsert: { expiresAt: endsAt } },
        upsert: true,
      },
    }));
    let result: mongo.BulkWriteResult;
    try {
      result = await this.counters.bulkWrite(writes, { ordered: false });
    } catch (err) {
      if (!(err instanceof mongo.MongoBulkWriteError) || !outcomeKnown(err, batch.length)) throw err;
      result = err.result;
    }
    if (!outcomeKnown(result, batch.length))
      throw new mongo.MongoRuntimeError("the counters' bulk write answered for fewer takes than it was sent");
    const inserted = result.upsertedIds;
    const collided = new Set<number>();
    const failed = new Set<number>();
    // A collision on `_id` is a counter that exists (full, or created meanwhile); any other write
    // error fails the take it names, with the server's code; the others stand.
    for (const failure of result.getWriteErrors()) {
      if (failure.code === 11000) collided.add(failure.index);
      else {
        failed.add(failure.index);
        batch[failure.index]?.reject(Object.assign(new Error(failure.errmsg ?? 'counter write failed'), { code: failure.code }));
      }
    }
    const existed = batch.filter((_, index) => !collided.has(index) && !failed.has(index) && !(index in inserted));
    const counts = new Map<string, number>();
    if (existed.length > 0) {
      const found = await this.counters.find({ _id: { $in: existed.map((take) => take.key) } }, { projection: { count: 1 } }).toArray();
      for (const counter of found) counts.set(counter._id, counter.count);
    }
    batch.forEach((take, index) => {
      if (failed.has(index)) return;
      if (collided.has(index)) this.takeExisting(take.key, take.limit, take.places).then(take.resolve, take.reject);
      else if (index in inserted) take.resolve(take.places);
      else take.resolve(counts.get(take.key) ?? take.places);
    });
  }

  /** Gives back a place taken for work that then failed (never below zero). */
  async giveBack(key: string): Promise<void> {
    await this.model.updateOne({ _id: key, count: { $gt: 0 } }, { $inc: { count: -1 } });
  }

  /** The places taken in `key`'s window (0 for a window nobody used). */
  async count(key: string): Promise<number> {
    const counter = await this.model.findById(key, { count: 1 }).lean();
    return counter?.count ?? 0;
  }

  /** Forgets the windows that ended before `now`; returns how many. */
  async deleteExpired(now = new Date()): Promise<number> {
    const { deletedCount } = await this.model.deleteMany({ expiresAt: { $lt: now } });
    return deletedCount;
  }
}

/**
 * Whether a bulk write's answer (or its failure) tells the outcome of each of its `ops`: every op
 * matched, upserted or named by a write error, no write-concern error, and not a failure of the
 * command itself (a network error, a server error: the driver wraps it with no write errors).
 */
function outcomeKnown(answer: mongo.BulkWriteResult | mongo.MongoBulkWriteError, ops: number): boolean {
  if (answer instanceof mongo.MongoBulkWriteError) {
    // The driver wraps a failed command's own error (`errorResponse`: a network error, a server
    // error) or a write-concern error (`err`); only write errors are answers of single ops.
    if (answer.errorResponse instanceof Error || answer.cause !== undefined || answer.err !== undefined) return false;
    return answer.result !== undefined && outcomeKnown(answer.result, ops);
  }
  if (answer.getWriteConcernError()) return false;
  return answer.matchedCount + answer.upsertedCount + answer.getWriteErrorCount() === ops;
}

export { calendarWindow, type CalendarUnit, type CalendarWindow } from './calendar';
