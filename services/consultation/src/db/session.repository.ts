import type { mongo } from 'mongoose';
import { newInternalId, newUnderscoreReference, type EventEnvelope, type PageQuery } from '@mkt/contracts/consultation';
import { eventsWritten } from '@mkt/kit/bus';
import { findPage } from '@mkt/kit/db';
import { isDuplicateKey } from '@mkt/kit/domain';
import { newSessionOutcome, type BookingDoc, type ConsultationDoc, type NewBooking, type SessionDoc } from '../domain/records';
import { collectionOf, findByKey } from './collections';
import { EXPIRY_INDEX, OVERDUE_INDEX, SESSION_LIST_ORDER, type ConsultationModels } from './models';

/** What a join reports: the session joined, or why not (a session of that time already left Scheduled). */
export type JoinResult = { session: Pick<SessionDoc, '_id'> } | { left: true } | { retry: true };

/** What a new session's upsert writes besides its filter (consultation, start, Scheduled) and the join's `$set`, `$push` and `$inc`. */
export type NewSessionFields = Omit<
  SessionDoc,
  'consultationId' | 'startsAt' | 'status' | 'bookingIds' | 'buyerIds' | 'participantCount' | 'updatedAt'
>;

/**
 * The `$setOnInsert` of the session a booking creates: its ids, what it shows of the
 * consultation and the slot, and the schema's defaults of the rest, as plain values (no mongoose
 * document per booking). `test/db-records.unit.test.ts` pins it to the schema's defaults.
 */
export function newSessionFields(
  booking: Pick<NewBooking, 'endsAt' | 'slotKey'>,
  consultation: Pick<ConsultationDoc, 'sellerId' | 'title'>,
  now: Date,
): NewSessionFields {
  return {
    _id: newInternalId('ses'),
    referenceId: newUnderscoreReference('SES'),
    sellerId: consultation.sellerId,
    consultationTitle: consultation.title,
    endsAt: booking.endsAt,
    slotKey: booking.slotKey,
    ...newSessionOutcome(),
    createdAt: now,
  };
}

/** `sessions`: one per consultation and start (unique), joined and left by bookings, moved by guarded writes. */
export class SessionRepository {
  constructor(private readonly models: Pick<ConsultationModels, 'Session'>) {}

  findByKey(key: string): Promise<SessionDoc | null> {
    return findByKey(this.models.Session, key);
  }

  statusOf(id: string): Promise<Pick<SessionDoc, 'status'> | null> {
    return this.models.Session.findById(id, { status: 1 }).lean<SessionDoc>();
  }

  /**
   * The user's sessions as seller or participant (`userId` null: everyone's), newest slot first.
   * The listing's indexes (models.ts) end with its order, so the server reads the page in order;
   * not hinted: which of them serves depends on the filter (a user's `$or` walks two).
   */
  page(scope: { userId: string | null }, query: PageQuery & { status?: string }) {
    const filter: Record<string, unknown> = scope.userId === null ? {} : { $or: [{ sellerId: scope.userId }, { buyerIds: scope.userId }] };
    if (query.status) filter.status = query.status;
    return findPage(this.models.Session, filter, query, SESSION_LIST_ORDER);
  }

  /**
   * Creates the slot's session or joins it, in one upsert. Only a Scheduled session takes a
   * booking: one that started or ended does not match, and the upsert then collides with it
   * (unique consultation + start) — `left`. `retry`: another booking created it meanwhile.
   */
  async join(booking: NewBooking, consultation: ConsultationDoc): Promise<JoinResult> {
    try {
      // The driver's own upsert; a new session gets the schema's defaults and timestamps.
      const now = new Date();
      const filter: mongo.Filter<SessionDoc> = {
        consultationId: consultation._id,
        startsAt: booking.startsAt,
        bookingIds: { $ne: booking._id },
        status: 'Scheduled',
      };
      const session = await collectionOf(this.models.Session).findOneAndUpdate(
        filter,
        {
          $setOnInsert: newSessionFields(booking, consultation, now),
          $set: { updatedAt: now },
          $push: { bookingIds: booking._id, buyerIds: booking.buyerId },
          $inc: { participantCount: booking.places },
        },
        // Only its id is answered: the session's lists grow with its participants.
        { upsert: true, returnDocument: 'after', projection: { _id: 1 } },
      );
      if (!session) throw new Error('An upsert returned no document');
      return { session };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const existing = await this.models.Session.findOne({
        consultationId: consultation._id,
        startsAt: booking.startsAt,
      }).lean<SessionDoc>();
      if (existing?.bookingIds.includes(booking._id)) return { session: existing };
      if (existing && existing.status !== 'Scheduled') return { left: true };
      return { retry: true };
    }
  }

  /** A booking leaves its session (once: only while the session lists it). */
  async leave(booking: Pick<BookingDoc, '_id' | 'consultationId' | 'startsAt' | 'buyerId' | 'places'>): Promise<void> {
    await this.models.Session.updateOne(
      { consultationId: booking.consultationId, startsAt: booking.startsAt, bookingIds: booking._id },
      { $pull: { bookingIds: booking._id, buyerIds: booking.buyerId }, $inc: { participantCount: -booking.places } },
    );
  }

  /**
   * The state change and its event in one write, guarded by the state the checks saw: of two
   * racing moves one applies (null for the other). The events are published right after the
   * write (`eventsWritten`).
   */
  async move(id: string, from: string, set: Record<string, unknown>, events: EventEnvelope[]): Promise<SessionDoc | null> {
    const moved = await this.models.Session.findOneAndUpdate(
      { _id: id, status: from },
      { $set: set, ...(events.length > 0 ? { $push: { pendingEvents: { $each: events } } } : {}) },
      { new: true },
    ).lean<SessionDoc>();
    if (moved && events.length > 0) eventsWritten(this.models.Session, moved);
    return moved;
  }

  async expire(id: string, now: Date): Promise<void> {
    await this.models.Session.updateOne({ _id: id, status: 'Scheduled' }, { $set: { status: 'Expired', expiredAt: now } });
  }

  async finishExpiry(id: string): Promise<void> {
    await this.models.Session.updateOne({ _id: id }, { $set: { expiryFinished: true } });
  }

  /**
   * Sessions in `status` whose slot ended before `endedBefore` (the sweep's), through the index of
   * `status` and `endsAt` (`OVERDUE_INDEX`): only the overdue ones are read, not every session held.
   */
  overdue(status: 'Scheduled' | 'In Progress', endedBefore: Date): Promise<SessionDoc[]> {
    return this.models.Session.find({ status, endsAt: { $lt: endedBefore } })
      .hint(OVERDUE_INDEX)
      .limit(50)
      .lean<SessionDoc[]>();
  }

  /**
   * Expired sessions whose bookings are not all cancelled yet (a crash is resumed), through the
   * partial index of the Expired ones by `expiryFinished` (`EXPIRY_INDEX`): the finished ones are
   * not read. The filter's `status` is the index's partial filter, so a server can use it.
   */
  unfinishedExpiries(): Promise<SessionDoc[]> {
    return this.models.Session.find({ status: 'Expired', expiryFinished: { $ne: true } })
      .hint(EXPIRY_INDEX)
      .limit(50)
      .lean<SessionDoc[]>();
  }
}
