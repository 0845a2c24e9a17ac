import type { IntegrationEvent } from '@mkt/contracts/wallet';
import type { UpdateQuery } from 'mongoose';
import { eventsWritten } from '@mkt/kit/bus';
import { isDuplicateKey } from '@mkt/kit/domain';
import type { SettlementDecision } from '../domain/booking-holds';
import type { BookingHoldDoc } from '../domain/records';
import { recordsOf } from './collections';
import { HOLD_MOVED_INDEX, type WalletModels } from './models';

/** Holds not ended yet: money is (or may be) held on the buyer's wallet. */
export const OPEN_HOLD_STATUSES = ['Pending', 'Held', 'Settling'] as const;

export type HoldStepField = 'release' | 'credit' | 'fee';

/** Every query of `booking_holds`; each transition is one write guarded by the state it leaves. */
export class BookingHoldRepository {
  readonly model: WalletModels['BookingHold'];

  constructor(models: Pick<WalletModels, 'BookingHold'>) {
    this.model = models.BookingHold;
  }

  /** A seller's holds still open (Held or Settling): what earnings show as ahead or settling. */
  openOfSeller(sellerId: string): Promise<BookingHoldDoc[]> {
    return this.model
      .find(
        { sellerId, status: { $in: ['Held', 'Settling'] } },
        { status: 1, amountMinor: 1, endsAt: 1, settlement: 1, credit: 1, consultationId: 1 },
      )
      .lean<BookingHoldDoc[]>();
  }

  /** The consultation of each of these bookings (holds that never named one are left out). */
  async consultationsOf(bookingIds: readonly string[]): Promise<Map<string, string>> {
    if (bookingIds.length === 0) return new Map();
    const docs = await this.model
      .find({ _id: { $in: bookingIds }, consultationId: { $ne: null } }, { consultationId: 1 })
      .lean<BookingHoldDoc[]>();
    return new Map(docs.map((doc) => [doc._id, doc.consultationId!]));
  }

  find(bookingId: string): Promise<BookingHoldDoc | null> {
    return recordsOf(this.model).findOne({ _id: bookingId });
  }

  /**
   * Inserts the record unless it exists; either way answers the stored one. The new record is
   * cast by the schema, with its defaults (as the update's upsert did: the hold request was
   * checked by the contracts schema), then upserted by the driver.
   */
  async upsert(bookingId: string, fields: Partial<BookingHoldDoc>, now = new Date()): Promise<BookingHoldDoc> {
    const fresh = new this.model({ ...fields, _id: bookingId, settlement: null, createdAt: now, updatedAt: now });
    try {
      const record = await recordsOf(this.model).findOneAndUpdate(
        { _id: bookingId },
        { $setOnInsert: fresh.toObject({ depopulate: true }) },
        { upsert: true, returnDocument: 'after' },
      );
      // An upsert answering the document after it always has one.
      return record!;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return (await this.find(bookingId))!;
    }
  }

  /** Pending → Voided (the consultation gave the booking up before its hold was taken). */
  async voidPending(bookingId: string): Promise<void> {
    await this.model.updateOne({ _id: bookingId, status: 'Pending' }, { $set: { status: 'Voided' } });
  }

  /** Pending → Rejected: the buyer's wallet refused the hold (short of funds); final. */
  async reject(bookingId: string): Promise<void> {
    await this.model.updateOne({ _id: bookingId, status: 'Pending' }, { $set: { status: 'Rejected', hold: 'none' } });
  }

  /** Pending → Held, the hold step recorded; answers the record (null: it had left Pending meanwhile). */
  recordHeld(bookingId: string): Promise<BookingHoldDoc | null> {
    return recordsOf(this.model).findOneAndUpdate(
      { _id: bookingId, status: 'Pending' },
      { $set: { status: 'Held', hold: 'done', updatedAt: new Date() } },
      { returnDocument: 'after' },
    );
  }

  /**
   * Records a decision in one conditional write (`Held → Settling`; the first wins). True when
   * this one was recorded. An admin's audit entry in it is published right after (`eventsWritten`).
   */
  async decide(decision: SettlementDecision): Promise<boolean> {
    const written = await this.model.updateOne(
      { _id: decision.bookingId, status: 'Held', settlement: null },
      {
        $set: {
          status: 'Settling',
          settlement: decision.settlement,
          dueAt: decision.dueAt,
          release: decision.release,
          credit: decision.credit,
          fee: decision.fee,
          // An admin's decision ends a dispute.
          ...(decision.history ? { disputed: false } : {}),
        },
        ...pushesOf(decision),
      },
    );
    const recorded = written.modifiedCount === 1;
    if (recorded && decision.audit) eventsWritten(this.model, decision.bookingId);
    return recorded;
  }

  /**
   * An admin's void replaces a capture not carried out yet, in one write guarded by exactly
   * that: Settling, a capture, its money not begun to move (`claim` sets `moving` first). Of the
   * admin and a racing sweep, one wins. True when this one was recorded; its audit entry is
   * published right after (`eventsWritten`).
   */
  async replaceCapture(decision: SettlementDecision): Promise<boolean> {
    const written = await this.model.updateOne(
      { _id: decision.bookingId, status: 'Settling', 'settlement.kind': 'capture', moving: { $ne: true }, release: 'pending' },
      {
        $set: {
          settlement: decision.settlement,
          dueAt: decision.dueAt,
          release: decision.release,
          credit: decision.credit,
          fee: decision.fee,
          disputed: false,
        },
        ...pushesOf(decision),
      },
    );
    const recorded = written.modifiedCount === 1;
    if (recorded && decision.audit) eventsWritten(this.model, decision.bookingId);
    return recorded;
  }

  /**
   * The settlement's money may begin to move: `moving` set in one write, unless it is a capture
   * the buyer disputes (it waits for an admin). Answers the record as claimed (its settlement
   * is final from here: an admin's void can no longer replace it); null: not to be carried out now.
   */
  claim(bookingId: string): Promise<BookingHoldDoc | null> {
    return recordsOf(this.model).findOneAndUpdate(
      { _id: bookingId, status: 'Settling', $or: [{ disputed: { $ne: true } }, { 'settlement.kind': { $ne: 'capture' } }] },
      { $set: { moving: true } },
      { returnDocument: 'after' },
    );
  }

  /** The buyer disputes the no-show: flagged once, while the money has not begun to move. True when recorded. */
  async dispute(bookingId: string, reason: string, at: Date): Promise<boolean> {
    const written = await this.model.updateOne(
      { _id: bookingId, status: { $in: ['Pending', 'Held', 'Settling'] }, moving: { $ne: true }, dispute: null },
      { $set: { disputed: true, dispute: { reason, at } } },
    );
    return written.modifiedCount === 1;
  }

  /**
   * An admin lets the disputed capture go on: the flag cleared, the decision kept. True when
   * recorded; its audit entry is published right after (`eventsWritten`).
   */
  async upholdCapture(bookingId: string, adminId: string, reason: string, at: Date, audit: IntegrationEvent): Promise<boolean> {
    const written = await this.model.updateOne(
      { _id: bookingId, disputed: true, status: { $in: ['Held', 'Settling'] }, moving: { $ne: true } },
      {
        $set: {
          disputed: false,
          'dispute.resolvedBy': adminId,
          'dispute.resolvedAt': at,
          'dispute.resolution': 'capture_upheld',
          'dispute.resolutionReason': reason,
        },
        // The audit entry goes with the ruling (the outbox), or neither is written.
        $push: { pendingEvents: audit },
      },
    );
    const recorded = written.modifiedCount === 1;
    if (recorded) eventsWritten(this.model, bookingId);
    return recorded;
  }

  /** A settlement step recorded (pending → done). */
  async recordStep(bookingId: string, field: HoldStepField): Promise<void> {
    await this.model.updateOne({ _id: bookingId, [field]: 'pending' }, { $set: { [field]: 'done' } });
  }

  /**
   * All steps done → Settled, with its event, in one write; null when a step is still owed (or it
   * was settled). The event is published right after the write (`eventsWritten`).
   */
  async finish(bookingId: string, event: IntegrationEvent | null, now: Date): Promise<BookingHoldDoc | null> {
    const done = await this.model
      .findOneAndUpdate(
        { _id: bookingId, status: 'Settling', release: 'done', credit: { $ne: 'pending' }, fee: { $ne: 'pending' } },
        { $set: { status: 'Settled', settledAt: now }, ...(event ? { $push: { pendingEvents: event } } : {}) },
        { new: true },
      )
      .lean<BookingHoldDoc>();
    if (done && event) eventsWritten(this.model, done);
    return done;
  }

  /**
   * Settlements to carry on: left Settling since before `cutoff` and due (a capture waiting for
   * its slot's end is left until then). Oldest first; one that fails is touched
   * (`countResumeFailure` moves its `updatedAt` on), so it waits a grace before its next try
   * and a hundred that keep failing cannot hold every other settlement back. Read through the
   * `{status, updatedAt}` index (hinted: its keys are the filter's status and the sort, whatever
   * the other conditions), so the server walks the Settling holds in order and stops at 100.
   */
  settlingDue(cutoff: Date, now: Date): Promise<BookingHoldDoc[]> {
    return this.model
      .find({
        status: 'Settling',
        updatedAt: { $lt: cutoff },
        dueAt: { $not: { $gt: now } },
        // A disputed capture waits for an admin.
        $or: [{ disputed: { $ne: true } }, { 'settlement.kind': { $ne: 'capture' } }],
      })
      .hint(HOLD_MOVED_INDEX)
      .sort({ updatedAt: 1 })
      .limit(100)
      .lean<BookingHoldDoc[]>();
  }

  async countResumeFailure(bookingId: string): Promise<void> {
    await this.model.updateOne({ _id: bookingId, status: 'Settling' }, { $inc: { resumeFailures: 1 } });
  }

  /**
   * Holds that ended without taking the money — Rejected or Voided between `endedAfter` and
   * `endedBefore`, or Pending since before `abandonedBefore` — whose hold op may have reached the
   * buyer's wallet anyway. Each branch of the `$or` is a range of the `{status, updatedAt}` index
   * (not hinted: the planner picks it per branch; the older `status` indexes stay candidates).
   */
  possiblyStray(endedBefore: Date, endedAfter: Date, abandonedBefore: Date): Promise<BookingHoldDoc[]> {
    return this.model
      .find({
        hold: { $ne: 'done' },
        buyerWalletId: { $ne: null },
        $or: [
          { status: { $in: ['Rejected', 'Voided'] }, updatedAt: { $lt: endedBefore, $gt: endedAfter } },
          { status: 'Pending', updatedAt: { $lt: abandonedBefore } },
        ],
      })
      .limit(100)
      .lean<BookingHoldDoc[]>();
  }

  /** Settlements over since before `cutoff` whose op ids the wallets still keep. */
  settledBefore(cutoff: Date): Promise<BookingHoldDoc[]> {
    return this.model
      .find({ status: 'Settled', opsForgotten: { $ne: true }, settledAt: { $lt: cutoff } })
      .limit(100)
      .lean<BookingHoldDoc[]>();
  }

  async markOpsForgotten(bookingId: string): Promise<void> {
    await this.model.updateOne({ _id: bookingId }, { $set: { opsForgotten: true } });
  }

  /**
   * The admins' queue of holds: overdue (open, its slot's end and any decided settlement's
   * `dueAt` before `overdueBefore`: on the `{status, endsAt}` index) and/or disputed (on the `{disputed, createdAt, _id}` index, in the page's order), oldest
   * first, with both counts.
   */
  async queue(
    kind: 'overdue' | 'disputed' | undefined,
    overdueBefore: Date,
    offset: number,
    limit: number,
  ): Promise<{ items: BookingHoldDoc[]; total: number; counts: { overdue: number; disputed: number } }> {
    // A decided settlement waiting for its own time (a no-show's dispute window) is not late until that has passed too.
    const overdue = {
      status: { $in: [...OPEN_HOLD_STATUSES] },
      endsAt: { $ne: null, $lt: overdueBefore },
      $or: [{ dueAt: null }, { dueAt: { $lt: overdueBefore } }],
    };
    const disputed = { disputed: true };
    const where = kind === 'overdue' ? overdue : kind === 'disputed' ? disputed : { $or: [overdue, disputed] };
    const [items, total, overdueCount, disputedCount] = await Promise.all([
      this.model.find(where).sort({ createdAt: 1, _id: 1 }).skip(offset).limit(limit).lean<BookingHoldDoc[]>(),
      this.model.countDocuments(where),
      this.model.countDocuments(overdue),
      this.model.countDocuments(disputed),
    ]);
    return { items, total, counts: { overdue: overdueCount, disputed: disputedCount } };
  }

  /**
   * The hold gauges' figures in one aggregation that matches on the `status` index: only open
   * holds are read (a few per booking in flight), never the settled history. Overdue: open and
   * past `overdueBefore` (an `endsAt` of null, a hold of the previous release, never is).
   */
  async openFigures(overdueBefore: Date): Promise<{ open: number; oldest: Date | null; overdue: number }> {
    const [row] = await this.model.aggregate<{ open: number; oldest: Date | null; overdue: number }>([
      { $match: { status: { $in: [...OPEN_HOLD_STATUSES] } } },
      {
        $group: {
          _id: null,
          open: { $sum: 1 },
          oldest: { $min: '$createdAt' },
          overdue: {
            $sum: {
              // endsAt null sorts below dates.
              $cond: [{ $and: [{ $gt: ['$endsAt', null] }, { $lt: ['$endsAt', overdueBefore] }] }, 1, 0],
            },
          },
        },
      },
    ]);
    return { open: row?.open ?? 0, oldest: row?.oldest ?? null, overdue: row?.overdue ?? 0 };
  }
}

/** What an admin's decision pushes with it: its history line and its audit entry (the outbox). */
function pushesOf(decision: SettlementDecision): Pick<UpdateQuery<BookingHoldDoc>, '$push'> {
  const push: NonNullable<UpdateQuery<BookingHoldDoc>['$push']> = {
    ...(decision.history ? { history: decision.history } : {}),
    ...(decision.audit ? { pendingEvents: decision.audit } : {}),
  };
  return Object.keys(push).length > 0 ? { $push: push } : {};
}
