import { Schema, type Model, type mongo } from 'mongoose';
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
export class WindowedCounter {
  constructor(private readonly model: Model<WindowedCounterDoc>) {}

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
    const counters = this.model.collection as unknown as mongo.Collection<WindowedCounterDoc>;
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
    // The collision means the counter exists: it is full, or another first take created it
    // between our match and our insert. The same guard, without the upsert, tells which.
    const retried = await counters.findOneAndUpdate(guard, { $inc: { count: places } }, { returnDocument: 'after', projection });
    return retried?.count ?? null;
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

export { calendarWindow, type CalendarUnit, type CalendarWindow } from './calendar';
