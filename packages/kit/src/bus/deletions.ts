import { Schema, type Connection, type Model } from 'mongoose';
import type { IntegrationEvent } from '@mkt/contracts/core';
import { isDuplicateKey } from '../errors';
import type { AnyModel } from '../mongo';
import { pendingEventsField, type OutboxRelay } from './outbox';

/**
 * A deleted record's tombstone: the claim on its delete and, once the record is gone, the outbox
 * of the delete's events (an admin's delete: its audit entry). Its id is the record's id, so one
 * delete of a record holds the claim at a time.
 */
export interface Tombstone {
  _id: string;
  /** `claimed`: the record is being deleted; `deleted`: it is gone and `entry` moved to `pendingEvents`. */
  state: 'claimed' | 'deleted';
  /** What the record must still match to be deleted (the state the delete was decided on). */
  guard: Record<string, unknown>;
  /** The event the delete records, until the record is gone. */
  entry: IntegrationEvent | null;
  pendingEvents: IntegrationEvent[];
  createdAt: Date;
}

const tombstoneSchema = new Schema<Tombstone>(
  {
    _id: { type: String, required: true },
    state: { type: String, required: true },
    guard: { type: Schema.Types.Mixed, default: {} },
    entry: { type: Schema.Types.Mixed, default: null },
    pendingEvents: pendingEventsField,
  },
  { timestamps: { createdAt: true, updatedAt: false }, versionKey: false, minimize: false },
);
tombstoneSchema.index({ state: 1, createdAt: 1 });

/** The tombstones of a service's deletes, in collection `deletions` of its database. */
export function tombstoneModel(db: Connection): Model<Tombstone> {
  return db.model<Tombstone>('Tombstone', tombstoneSchema, 'deletions');
}

export interface RecordDeletesOptions {
  /** A claim this old is taken to be its request's that died: the sweep finishes it. */
  graceMs?: number;
  /** A drained tombstone is kept this long, so no later claim mistakes its delete for its own. */
  retainMs?: number;
}

/**
 * Deletes records of one collection so that the event a delete records (an admin's delete:
 * its audit entry) is never lost and never recorded for a delete that did not happen, with no
 * transaction:
 *
 * 1. the tombstone is inserted (the claim, holding the entry); a second delete of the record
 *    finds it there (duplicate key) and deletes nothing;
 * 2. the record is deleted, guarded by the state the delete was decided on;
 * 3. the tombstone turns `deleted` and its entry moves into its `pendingEvents` in one
 *    conditional write (only a `claimed` one), which the outbox relay publishes; or, when the
 *    guard missed (the record changed meanwhile), the claim is dropped and nothing is recorded.
 *
 * A crash between the steps leaves a claim that `sweep` finishes after `graceMs`: the record
 * still matching its guard is deleted; a record that is gone was deleted by this claim (no other
 * delete could hold one meanwhile, and tombstones are kept `retainMs`), so the entry moves;
 * a record that changed keeps living and the claim is dropped. Every delete of the collection
 * must go through here (an owner's too, with no entry), which is what makes "gone" mean "by
 * this claim".
 */
export class RecordDeletes {
  private readonly graceMs: number;
  private readonly retainMs: number;

  constructor(
    private readonly records: AnyModel,
    readonly tombstones: Model<Tombstone>,
    private readonly outbox: Pick<OutboxRelay, 'flush'>,
    options: RecordDeletesOptions = {},
  ) {
    this.graceMs = options.graceMs ?? 30_000;
    this.retainMs = options.retainMs ?? 3_600_000;
  }

  /**
   * Deletes record `id` if it still matches `guard`, recording `entry` with it. False when it
   * did not: another delete holds it, it is gone, or it changed (read it again to tell which).
   */
  async delete(id: string, guard: Record<string, unknown>, entry: IntegrationEvent | null): Promise<boolean> {
    try {
      await this.tombstones.collection.insertOne({
        _id: id,
        state: 'claimed',
        guard,
        entry,
        pendingEvents: [],
        createdAt: new Date(),
      } as object);
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
    const { deletedCount } = await this.records.collection.deleteOne({ _id: id, ...guard } as object);
    if (deletedCount === 0) {
      await this.tombstones.collection.deleteOne({ _id: id, state: 'claimed' } as object);
      return false;
    }
    await this.settle(id, entry);
    return true;
  }

  /** Finishes the claims their requests left (a crash), and forgets drained tombstones past `retainMs`. */
  async sweep(now = Date.now()): Promise<void> {
    const stale = await this.tombstones
      .find({ state: 'claimed', createdAt: { $lt: new Date(now - this.graceMs) } })
      .limit(100)
      .lean<Tombstone[]>();
    for (const claim of stale) {
      const { deletedCount } = await this.records.collection.deleteOne({ _id: claim._id, ...claim.guard } as object);
      if (deletedCount === 0 && (await this.records.collection.countDocuments({ _id: claim._id } as object, { limit: 1 })) > 0) {
        await this.tombstones.collection.deleteOne({ _id: claim._id, state: 'claimed' } as object);
      } else {
        await this.settle(claim._id, claim.entry);
      }
    }
    await this.tombstones.collection.deleteMany({
      state: 'deleted',
      createdAt: { $lt: new Date(now - this.retainMs) },
      'pendingEvents.0': { $exists: false },
    } as object);
  }

  /** The record is gone: the entry moves into the outbox once (only a claimed tombstone takes it). */
  private async settle(id: string, entry: IntegrationEvent | null): Promise<void> {
    const update = entry ? { $set: { state: 'deleted', entry: null }, $push: { pendingEvents: entry } } : { $set: { state: 'deleted' } };
    const settled = await this.tombstones.findOneAndUpdate({ _id: id, state: 'claimed' }, update, { new: true }).lean<Tombstone>();
    // Published right after (never awaited: the answer does not wait on the broker); the sweep otherwise.
    if (settled?.pendingEvents.length) void this.outbox.flush(this.tombstones, settled);
  }
}
