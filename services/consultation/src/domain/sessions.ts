import { randomUUID } from 'node:crypto';
import { makeEvent, type EventEnvelope, type SessionStatus } from '@mkt/contracts';
import {
  InvalidField,
  InvalidState,
  NotFound,
  RuleViolation,
  type AuthenticatedUser,
  type Logger,
  type OutboxRelay,
  findPage,
} from '@mkt/kit';
import { Booking, Session, SlotPlace, type BookingDoc, type SessionDoc } from '../db/booking.models';
import { Consultation } from '../db/setup.models';
import { assertOwner, findByKey, isAdmin } from './access';
import { BookingSteps } from './booking-steps';
import { slotKey } from './consultations';
import { closeSlot } from './places';

export type SessionMove = 'start' | 'end' | 'no-show';

/** The interface's table: Scheduled → In Progress → Completed; Scheduled → No Show. */
export const SESSION_MOVES: Record<SessionMove, { from: SessionStatus; to: SessionStatus }> = {
  start: { from: 'Scheduled', to: 'In Progress' },
  end: { from: 'In Progress', to: 'Completed' },
  'no-show': { from: 'Scheduled', to: 'No Show' },
};

/** By default a seller may start a session 15 minutes before its slot, not earlier. */
export const START_LEAD_MS = 15 * 60_000;
/** How far ahead of the server's clock a client's `actualStartTime`/`actualEndTime` may be. */
export const CLOCK_SKEW_MS = 2 * 60_000;
/** By default a session nobody moved is ended by the sweep an hour after its slot's end. */
export const EXPIRY_GRACE_MS = 60 * 60_000;

export interface SessionRules {
  startLeadMs: number;
  /** How long after its slot's end a session nobody moved (or nobody ended) is ended by the sweep. */
  expiryGraceMs: number;
}

/**
 * When a move happens: the client's actual time, or now. Ending a session is what makes its
 * buyers eligible to review, so its times must be ones that could have happened: a start no
 * earlier than 15 minutes before the slot, an end after the start, neither in the future
 * (beyond a small clock skew). A session started or ended early on paper is refused.
 */
export function moveTime(
  move: SessionMove,
  session: Pick<SessionDoc, 'startsAt' | 'startedAt'>,
  given: string | undefined,
  now: Date,
  startLeadMs = START_LEAD_MS,
): Date {
  const at = given ? new Date(given) : now;
  const field = move === 'start' ? 'actualStartTime' : 'actualEndTime';
  if (at.getTime() > now.getTime() + CLOCK_SKEW_MS) throw new InvalidField(`${field} is in the future`, field);
  if (move === 'start') {
    const earliest = new Date(session.startsAt.getTime() - startLeadMs);
    const lead = `${Math.round(startLeadMs / 60_000)} minutes`;
    if (now < earliest)
      throw new RuleViolation('too_early', `The session can be started from ${earliest.toISOString()} (${lead} before its slot)`);
    if (at < earliest) throw new InvalidField(`actualStartTime is more than ${lead} before the slot`, field);
  }
  if (move === 'end') {
    // Ending pays the seller and opens reviews: not before the slot has even begun (issue 20).
    if (now < session.startsAt)
      throw new RuleViolation('too_early', `The session can be ended from its slot's start, ${session.startsAt.toISOString()}`);
    if (session.startedAt && at <= session.startedAt) throw new InvalidField('actualEndTime must be after the start', field);
    if (at < session.startsAt) throw new RuleViolation('too_early', 'actualEndTime is before the slot starts', field);
  }
  return at;
}

export interface MoveDetails {
  at?: string;
  notes?: string;
  attemptedContact?: boolean;
  contactMethod?: string;
  sessionSummary?: string;
  nextSteps?: string;
}

/** The fields a move sets: the new status, its time, and the notes, summary and next steps given. */
export function movedFields(
  session: Pick<SessionDoc, 'startsAt' | 'startedAt'>,
  move: SessionMove,
  details: MoveDetails,
  at: Date,
): Record<string, unknown> {
  const set: Record<string, unknown> = { status: SESSION_MOVES[move].to };
  if (details.notes !== undefined) set.notes = details.notes;
  if (move === 'start') set.startedAt = at;
  if (move === 'no-show') {
    set.markedAt = at;
    if (details.attemptedContact !== undefined) set.attemptedContact = details.attemptedContact;
    if (details.contactMethod !== undefined) set.contactMethod = details.contactMethod;
  }
  if (move === 'end') {
    set.endedAt = at;
    set.duration = Math.max(0, Math.round((at.getTime() - (session.startedAt ?? session.startsAt).getTime()) / 60_000));
    if (details.sessionSummary !== undefined) set.sessionSummary = details.sessionSummary;
    if (details.nextSteps !== undefined) set.nextSteps = details.nextSteps;
  }
  return set;
}

export class Sessions {
  constructor(
    private readonly outbox: OutboxRelay,
    private readonly log: Logger,
    private readonly rules: SessionRules = { startLeadMs: START_LEAD_MS, expiryGraceMs: EXPIRY_GRACE_MS },
  ) {
    this.steps = new BookingSteps(outbox, log);
  }

  private readonly steps: BookingSteps;

  /** A seller's sessions, a buyer's sessions (those they booked), or all for an admin. */
  async list(user: AuthenticatedUser, query: { page: number; limit: number; status?: string }) {
    const filter: Record<string, unknown> = isAdmin(user) ? {} : { $or: [{ sellerId: user.id }, { buyerIds: user.id }] };
    if (query.status) filter.status = query.status;
    return findPage(Session, filter, query, { startsAt: -1 });
  }

  /** Start, end or no-show by the seller: checked, timed, then one conditional write with its event. */
  async move(
    user: AuthenticatedUser,
    key: string,
    move: SessionMove,
    details: MoveDetails,
    correlationId: string,
    now = new Date(),
  ): Promise<SessionDoc> {
    const session = await this.movableSession(user, key, move, now);
    const at = moveTime(move, session, move === 'no-show' ? undefined : details.at, now, this.rules.startLeadMs);
    const event = await this.moveEvent(session, move, at, correlationId);
    // Leaving Scheduled closes the slot first: no booking (nor hold) can join it afterwards.
    if (move !== 'end') await this.closeSlotOf(session);
    return this.applyMove(session, move, movedFields(session, move, details, at), event);
  }

  /**
   * Ends what nobody ended, so no hold stays open for ever (issue 20): a session still Scheduled
   * `expiryGraceMs` after its slot's end was never held — Expired, its Confirmed bookings
   * cancelled with a full refund; one still In Progress then is Completed at its slot's end (its
   * holds are captured). Each step is guarded by the state it leaves; a crash is resumed here.
   */
  async sweep(now = new Date()): Promise<void> {
    const overdue = { endsAt: { $lt: new Date(now.getTime() - this.rules.expiryGraceMs) } };
    const correlationId = randomUUID();
    for (const session of await Session.find({ status: 'Scheduled', ...overdue })
      .limit(50)
      .lean<SessionDoc[]>()) {
      await this.closeSlotOf(session);
      await Session.updateOne({ _id: session._id, status: 'Scheduled' }, { $set: { status: 'Expired', expiredAt: now } });
      this.log.info({ sessionId: session._id, correlationId }, 'session expired: nobody held it');
    }
    for (const session of await Session.find({ status: 'Expired', expiryFinished: { $ne: true } })
      .limit(50)
      .lean<SessionDoc[]>()) {
      const bookings = await Booking.find({ sessionId: session._id, status: 'Confirmed' }).lean<BookingDoc[]>();
      for (const booking of bookings) await this.steps.cancelBySystem(booking, 'session_expired', now);
      await Session.updateOne({ _id: session._id }, { $set: { expiryFinished: true } });
    }
    for (const session of await Session.find({ status: 'In Progress', ...overdue })
      .limit(50)
      .lean<SessionDoc[]>()) {
      try {
        const at = new Date(Math.max(session.endsAt.getTime(), (session.startedAt ?? session.startsAt).getTime()));
        const event = await this.moveEvent(session, 'end', at, correlationId);
        await this.applyMove(session, 'end', movedFields(session, 'end', {}, at), event);
      } catch (err) {
        this.log.warn({ err, sessionId: session._id, correlationId }, 'an overdue session could not be completed; the sweep tries again');
      }
    }
  }

  private async closeSlotOf(session: SessionDoc): Promise<void> {
    await closeSlot(SlotPlace, session.slotKey ?? slotKey(session.consultationId, session.startsAt), session.consultationId);
  }

  /** The session, when the caller is its seller and `move` may happen from its state now. */
  private async movableSession(user: AuthenticatedUser, key: string, move: SessionMove, now: Date): Promise<SessionDoc> {
    const session = await findByKey(Session, key);
    if (!session) throw new NotFound('Session');
    assertOwner(user, session.sellerId, 'session');
    const { from } = SESSION_MOVES[move];
    if (session.status !== from) throw new InvalidState(`A ${session.status} session cannot be moved by ${move}`);
    if (move === 'start' && session.participantCount === 0) throw new InvalidState('Nobody is booked on this session');
    if (move === 'no-show' && now < session.startsAt) throw new InvalidState('The session has not begun yet');
    return session;
  }

  /** What an end or a no-show tells others (a start tells nobody), naming the Confirmed bookings. */
  private async moveEvent(session: SessionDoc, move: SessionMove, at: Date, correlationId: string) {
    if (move === 'start') return undefined;
    const { buyerIds, bookingIds, paidBuyerIds } = await this.confirmedOf(session);
    const about = { sessionId: session._id, consultationId: session.consultationId, sellerId: session.sellerId, buyerIds, bookingIds };
    const origin = { source: 'consultation', correlationId };
    if (move === 'no-show') return makeEvent('consultation.session.no_show', { ...about, markedAt: at.toISOString() }, origin);
    const consultation = await Consultation.findById(session.consultationId, { referenceId: 1 }).lean();
    return makeEvent(
      'consultation.session.completed',
      { ...about, consultationReferenceId: consultation?.referenceId, endedAt: at.toISOString(), paidBuyerIds },
      origin,
    );
  }

  /**
   * The state change and its event in one write, guarded by the state the checks saw: of two
   * racing moves one applies, the other is 409.
   */
  private async applyMove(session: SessionDoc, move: SessionMove, set: Record<string, unknown>, event: EventEnvelope | undefined) {
    const { from, to } = SESSION_MOVES[move];
    const moved = await Session.findOneAndUpdate(
      { _id: session._id, status: from },
      { $set: set, ...(event ? { $push: { pendingEvents: event } } : {}) },
      { new: true },
    ).lean<SessionDoc>();
    if (!moved) throw new InvalidState(`The session is no longer ${from}`);
    if (event) void this.outbox.flush(Session, moved);
    this.log.info({ sessionId: session._id, move, status: to }, 'session moved');
    return moved;
  }

  /**
   * The session's Confirmed bookings and their buyers (the session's own list may hold a
   * leaver): the wallet captures the holds of exactly these bookings; `paidBuyerIds` are the
   * buyers who paid (only their reviews count in the rating).
   */
  private async confirmedOf(session: SessionDoc): Promise<{ buyerIds: string[]; bookingIds: string[]; paidBuyerIds: string[] }> {
    const bookings = await Booking.find({ sessionId: session._id, status: 'Confirmed' }, { buyerId: 1, payment: 1 }).lean();
    const buyersOf = (list: typeof bookings) => [...new Set(list.map((booking) => booking.buyerId))];
    return {
      buyerIds: buyersOf(bookings),
      bookingIds: bookings.map((booking) => booking._id),
      // Paid: the wallet holds their money (a coupon that made it free is not paying).
      paidBuyerIds: buyersOf(bookings.filter((booking) => booking.payment === 'held')),
    };
  }
}
