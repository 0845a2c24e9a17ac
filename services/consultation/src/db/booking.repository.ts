import type { mongo } from 'mongoose';
import type { PageQuery } from '@mkt/contracts/consultation';
import { eventsWritten } from '@mkt/kit/bus';
import { findPage } from '@mkt/kit/db';
import type { IntegrationEvent } from '@mkt/contracts/consultation';
import type { BookingChange, BookingDoc, BookingGuard, BookingStep, NewBooking } from '../domain/records';
import { collectionOf, findByKey } from './collections';
import { GIVEN_UP_STATUSES, LAST_GIVE_BACK } from '../domain/bookings';
import { BOOKING_LIST_ORDER, DISPUTED, DISPUTED_INDEX, OWED_INDEX, WAITING_INDEX, WAITING_TURN, type ConsultationModels } from './models';

/**
 * The given-up bookings still owing a give-back (`owesGiveBack`), as the sweep reads them: flagged
 * `owed` (the sparse index holds only those) and their last give-back not recorded. A process of
 * a version before the flag records `slot` without removing `owed`; such a booking owes nothing
 * and is never read, so it cannot take the place of one that owes.
 */
export const OWED_FILTER = { owed: true, compensated: { $ne: LAST_GIVE_BACK } } as const satisfies mongo.Filter<BookingDoc>;

/** The owed bookings' turn: never tried by the sweep first, then the least recently tried, then the oldest moves. */
const OWED_TURN = { owedTriedAt: 1, updatedAt: 1, _id: 1 } as const;

/** Flagged `owed` though its last give-back is recorded (by a process of a version before the flag): nothing owed. */
const GIVEN_BACK_FLAGGED = { owed: true, compensated: LAST_GIVE_BACK } as const satisfies mongo.Filter<BookingDoc>;

/**
 * Given up (Failed, Cancelled), its last give-back not recorded, and not flagged: a booking a
 * process of a version before the flag gave up, which the sweep's read does not see until it is.
 */
export const UNFLAGGED_OWED_FILTER = {
  status: { $in: [...GIVEN_UP_STATUSES] },
  compensated: { $ne: LAST_GIVE_BACK },
  owed: { $exists: false },
} as const satisfies mongo.Filter<BookingDoc>;

/**
 * Flags (`owed: true`) the bookings that owe a give-back without the flag (`UNFLAGGED_OWED_FILTER`):
 * every one, or at most `limit`. Each write keeps the rule in its filter, so a booking whose last
 * give-back is recorded meanwhile, or flagged by another run, is left as it is. The migration
 * `0004-owed-give-backs` flags all of them once; the sweep looks again now and then for those given
 * up since by a process of a version before the flag. Answers how many it flagged.
 */
export async function flagOwedGiveBacks(bookings: mongo.Collection<BookingDoc>, limit?: number): Promise<number> {
  const flag: mongo.UpdateFilter<BookingDoc> = { $set: { owed: true } };
  if (limit === undefined) return (await bookings.updateMany(UNFLAGGED_OWED_FILTER, flag)).modifiedCount;
  const found = await bookings.find(UNFLAGGED_OWED_FILTER, { projection: { _id: 1 }, limit }).toArray();
  if (found.length === 0) return 0;
  const ids = found.map(({ _id }) => _id);
  return (await bookings.updateMany({ _id: { $in: ids }, ...UNFLAGGED_OWED_FILTER }, flag)).modifiedCount;
}

/**
 * A new booking as stored: what the domain made (`newBooking` sets every field) with the schema's
 * defaults of the fields it leaves out, and its times. `test/db-records.unit.test.ts` pins it to
 * what the schema's document of the same booking holds.
 */
export function bookingRecord(booking: NewBooking, now: Date): BookingDoc {
  return { dispute: null, ...booking, createdAt: now, updatedAt: now };
}

/**
 * `bookings`. Every state change is one conditional write guarded by the state it leaves (the
 * rule in the filter), with its event in the same write when it has one (the outbox).
 */
export class BookingRepository {
  constructor(private readonly models: Pick<ConsultationModels, 'Booking'>) {}

  findById(id: string): Promise<BookingDoc | null> {
    return this.models.Booking.findById(id).lean<BookingDoc>();
  }

  findByKey(key: string): Promise<BookingDoc | null> {
    return findByKey(this.models.Booking, key);
  }

  /** Who cancelled it, if anyone (a void of a PaymentPending booking asked by a client). */
  async cancelledBy(id: string): Promise<BookingDoc['cancelledBy'] | undefined> {
    return (await this.models.Booking.findById(id, { cancelledBy: 1 }).lean<BookingDoc>())?.cancelledBy;
  }

  /**
   * The driver inserts the booking as the domain made it (`bookingRecord`): every field typed and
   * computed by the service, the client's text in it checked by the contracts' schemas — no
   * mongoose document, casting or validation per booking.
   */
  async insert(booking: NewBooking, now = new Date()): Promise<void> {
    await collectionOf(this.models.Booking).insertOne(bookingRecord(booking, now));
  }

  /** A booking being made is dropped (it never existed for the client) while still Pending. */
  async deletePending(id: string): Promise<void> {
    await collectionOf(this.models.Booking).deleteOne({ _id: id, status: 'Pending' });
  }

  /**
   * One guarded move: `set` (and `event`, in the same write) when the booking is still in the
   * state of `guard`; the booking after it, or null when the guard missed. The event is
   * published right after the write (`eventsWritten`).
   */
  async move(id: string, guard: BookingGuard, set: BookingChange, event?: IntegrationEvent): Promise<BookingDoc | null> {
    // The driver's own write: the values are the domain's (typed: strings, numbers,
    // dates), the client's text in them checked by the contracts schemas; no casting needed.
    const update: mongo.UpdateFilter<BookingDoc> = {
      $set: { ...set, updatedAt: new Date() },
      ...(event ? { $push: { pendingEvents: event } } : {}),
    };
    const moved = await collectionOf(this.models.Booking).findOneAndUpdate({ _id: id, ...guard }, update, { returnDocument: 'after' });
    if (moved && event) eventsWritten(this.models.Booking, moved);
    return moved;
  }

  /** `move` without reading the booking back: whether it applied. */
  async moveQuietly(id: string, guard: BookingGuard, set: BookingChange, at = new Date()): Promise<boolean> {
    const update: mongo.UpdateFilter<BookingDoc> = { $set: { ...set, updatedAt: at } };
    const { modifiedCount } = await collectionOf(this.models.Booking).updateOne({ _id: id, ...guard }, update);
    return modifiedCount === 1;
  }

  /** A PaymentPending booking's status and payment state, read again after a guarded write missed. */
  paymentOf(id: string): Promise<Pick<BookingDoc, 'status' | 'payment'> | null> {
    return this.models.Booking.findById(id, { status: 1, payment: 1 }).lean<BookingDoc>();
  }

  /**
   * A step of its flow given back: recorded once (the flow skips it on a repeat). The last one
   * (`slot`) also clears `owed` in the same write: from then the sweep no longer reads the booking.
   */
  async markCompensated(id: string, step: BookingStep): Promise<void> {
    const update: mongo.UpdateFilter<BookingDoc> = { $addToSet: { compensated: step } };
    if (step === LAST_GIVE_BACK) update.$unset = { owed: '', owedTriedAt: '' };
    await collectionOf(this.models.Booking).updateOne({ _id: id }, update);
  }

  /**
   * Removes `owed` from the bookings whose last give-back is recorded yet still carry it (a process
   * of a version before the flag recorded it): one write over the sparse index, guarded on the
   * recorded `slot`, so the index keeps only what is owed. Answers how many it cleared.
   */
  async clearGivenBack(): Promise<number> {
    const update: mongo.UpdateFilter<BookingDoc> = { $unset: { owed: '' } };
    const { modifiedCount } = await collectionOf(this.models.Booking).updateMany(GIVEN_BACK_FLAGGED, update, { hint: OWED_INDEX });
    return modifiedCount;
  }

  /** `flagOwedGiveBacks` of at most `limit` bookings (the sweep's look). */
  flagOwed(limit: number): Promise<number> {
    return flagOwedGiveBacks(collectionOf(this.models.Booking), limit);
  }

  /** The refund of a cancelled booking reached the buyer: once, only from Pending. */
  async markRefunded(id: string, at: Date): Promise<void> {
    await this.models.Booking.updateOne({ _id: id, refundStatus: 'Pending' }, { $set: { refundStatus: 'Refunded', refundedAt: at } });
  }

  /**
   * A listing: the user's bookings as buyer or seller (`userId` null: everyone's), in some
   * statuses, newest slot first. The listing's indexes (models.ts) end with its order, so the
   * server reads the page in order; not hinted: a user's `$or` walks two of them, merged. An
   * admin's disputed queue is hinted to the disputed bookings' own index (`DISPUTED_INDEX`).
   */
  page(scope: { userId: string | null; statuses: string[]; disputed?: boolean }, query: PageQuery) {
    const filter: Record<string, unknown> = scope.userId === null ? {} : { $or: [{ buyerId: scope.userId }, { sellerId: scope.userId }] };
    filter.status = scope.statuses.length === 1 ? scope.statuses[0] : { $in: scope.statuses };
    if (!scope.disputed) return findPage(this.models.Booking, filter, query, BOOKING_LIST_ORDER);
    Object.assign(filter, DISPUTED);
    return findPage(this.models.Booking, filter, query, BOOKING_LIST_ORDER, scope.userId === null ? DISPUTED_INDEX : undefined);
  }

  /**
   * The bookings whose flow may be unfinished: Pending ones made before `stuckBefore` (left by a
   * crash), PaymentPending ones untouched since `waitingBefore` (the wallet is asked again), and
   * Failed or Cancelled ones still owing a give-back (`owed`), read through the sparse index
   * that holds only those: the read costs the work owed, not the history of given-up bookings.
   * Each kind with its own limit, so that many of one (PaymentPending ones while the wallet is
   * away) never keep the others from their turn. The PaymentPending and the owed ones are read least
   * recently tried first (`paymentTriedAt`, `owedTriedAt`; never tried first, then the oldest), and
   * those read are stamped `triedAt` (one write per kind): bookings whose retry keeps failing (an
   * error writes nothing on them) go behind the others, so they never fill the limit on every sweep.
   * The PaymentPending read walks the partial index of its turn (`WAITING_INDEX`: those bookings
   * only, keyed in the sort's order), so it reads at most its limit of them in order, not every
   * waiting booking fetched and sorted in memory on each sweep.
   */
  async unfinished(stuckBefore: Date, waitingBefore: Date, perKind = 100, triedAt = new Date()): Promise<BookingDoc[]> {
    const { Booking } = this.models;
    const found = await Promise.all([
      Booking.find({ status: 'Pending', createdAt: { $lt: stuckBefore } })
        .limit(perKind)
        .lean<BookingDoc[]>(),
      Booking.find({ status: 'PaymentPending', updatedAt: { $lt: waitingBefore } })
        .hint(WAITING_INDEX)
        .sort(WAITING_TURN)
        .limit(perKind)
        .lean<BookingDoc[]>(),
      Booking.find(OWED_FILTER).hint(OWED_INDEX).sort(OWED_TURN).limit(perKind).lean<BookingDoc[]>(),
    ]);
    const waiting = found[1].map(({ _id }) => _id);
    const owed = found[2].map(({ _id }) => _id);
    await Promise.all([
      waiting.length > 0
        ? collectionOf(Booking).updateMany({ _id: { $in: waiting }, status: 'PaymentPending' }, { $set: { paymentTriedAt: triedAt } })
        : null,
      owed.length > 0 ? collectionOf(Booking).updateMany({ _id: { $in: owed }, owed: true }, { $set: { owedTriedAt: triedAt } }) : null,
    ]);
    return found.flat();
  }

  /** A session's Confirmed bookings (what its events name and its expiry cancels). */
  confirmedOfSession(sessionId: string): Promise<BookingDoc[]> {
    return this.models.Booking.find({ sessionId, status: 'Confirmed' }).lean<BookingDoc[]>();
  }

  /** A buyer's Confirmed bookings of a session. */
  confirmedOfSessionBy(sessionId: string, buyerId: string): Promise<BookingDoc[]> {
    return this.models.Booking.find({ sessionId, status: 'Confirmed', buyerId }).lean<BookingDoc[]>();
  }

  /** What a session's events need of its Confirmed bookings. */
  confirmedBuyersOfSession(
    sessionId: string,
  ): Promise<Array<Pick<BookingDoc, '_id' | 'buyerId' | 'payment' | 'subTotalMinor' | 'totalAmountMinor'>>> {
    return this.models.Booking.find(
      { sessionId, status: 'Confirmed' },
      { buyerId: 1, payment: 1, subTotalMinor: 1, totalAmountMinor: 1 },
    ).lean<BookingDoc[]>();
  }

  /** How many uses of the coupon the user (by id, or — `self` false — by id or USR reference) holds through bookings in `statuses`. */
  couponUsesOf(couponId: string, statuses: readonly string[], user: { key: string; self: boolean }): Promise<number> {
    const buyer = user.self ? { buyerId: user.key } : { $or: [{ buyerId: user.key }, { buyerRef: user.key }] };
    return this.models.Booking.countDocuments({ couponId, status: { $in: statuses }, ...buyer });
  }

  /**
   * Per rule set: its Confirmed bookings (`bookings`) and the places those starting in the window
   * hold (a booking from before `places` was kept holds one), in two grouped commands for all of
   * them.
   */
  async usageOfRuleSets(
    ruleSetIds: string[],
    window: { from: Date; to: Date },
  ): Promise<Map<string, { bookings: number; places: number }>> {
    const confirmed = { ruleSetId: { $in: ruleSetIds }, status: 'Confirmed' };
    const [all, upcoming] = await Promise.all([
      this.models.Booking.collection
        .aggregate<{ _id: string; n: number }>([{ $match: confirmed }, { $group: { _id: '$ruleSetId', n: { $sum: 1 } } }])
        .toArray(),
      this.models.Booking.collection
        .aggregate<{ _id: string; n: number }>([
          { $match: { ...confirmed, startsAt: { $gte: window.from, $lt: window.to } } },
          { $group: { _id: '$ruleSetId', n: { $sum: { $ifNull: ['$places', 1] } } } },
        ])
        .toArray(),
    ]);
    const usage = new Map(ruleSetIds.map((id) => [id, { bookings: 0, places: 0 }]));
    for (const { _id, n } of all) usage.get(_id)!.bookings = n;
    for (const { _id, n } of upcoming) usage.get(_id)!.places = n;
    return usage;
  }
}
