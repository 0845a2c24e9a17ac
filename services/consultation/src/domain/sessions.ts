import {
  adminActionData,
  makeEvent,
  type AdminRequestContext,
  type IntegrationEvent,
  type SessionStatus,
} from '@mkt/contracts/consultation';
import { Forbidden, InvalidField, InvalidState, NotFound, RuleViolation } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import { assertOwner, isAdmin } from './access';
import { slotKey } from './consultations';
import type { BookingDoc, SessionDoc } from './records';

// The session state machine: Scheduled → In Progress → Completed; Scheduled → No Show; the
// sweep: Scheduled → Expired, In Progress → Completed once overdue. Pure: the caller passes `now`.

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

/**
 * How long into its slot a seller waits before marking a no-show: the larger of `minMs` and
 * `sharePercent` % of the slot's duration (by default 10 minutes, or a quarter of the slot).
 */
export interface NoShowGrace {
  minMs: number;
  sharePercent: number;
}
export const NO_SHOW_GRACE: NoShowGrace = { minMs: 10 * 60_000, sharePercent: 25 };

export interface SessionRules {
  startLeadMs: number;
  /** How long after its slot's end a session nobody moved (or nobody ended) is ended by the sweep. */
  expiryGraceMs: number;
  noShowGrace?: NoShowGrace;
}

/** The first moment a no-show may be marked: the slot's start plus its grace. */
export function noShowFrom(session: Pick<SessionDoc, 'startsAt' | 'endsAt'>, grace: NoShowGrace = NO_SHOW_GRACE): Date {
  const duration = Math.max(0, session.endsAt.getTime() - session.startsAt.getTime());
  return new Date(session.startsAt.getTime() + Math.max(grace.minMs, Math.floor((duration * grace.sharePercent) / 100)));
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
    // Ending pays the seller and opens reviews: not before the slot has even begun.
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

/**
 * The audit entry of an admin's move of another seller's session (`session.start`, `session.end`,
 * `session.no_show`), written into the session's outbox with the move itself; none when its seller
 * moves it. Before: the state left; after: the fields the move sets.
 */
export function sessionMoveAudit(
  user: Pick<AuthenticatedUser, 'id' | 'role'>,
  session: Pick<SessionDoc, '_id' | 'sellerId'>,
  move: SessionMove,
  set: Record<string, unknown>,
  context: AdminRequestContext,
  now: Date,
): IntegrationEvent | undefined {
  if (user.role !== 'admin' || user.id === session.sellerId) return undefined;
  const action = move === 'no-show' ? 'session.no_show' : move === 'start' ? 'session.start' : 'session.end';
  const after = Object.fromEntries(
    Object.entries(set).map(([field, value]) => [field, value instanceof Date ? value.toISOString() : value]),
  );
  const data = adminActionData(user, action, { type: 'session', id: session._id }, context, now, {
    before: { status: SESSION_MOVES[move].from },
    after,
  });
  return makeEvent('consultation.admin_action.recorded', data, { source: 'consultation', correlationId: context.requestId });
}

/**
 * The session, when the caller is its seller (or an admin) and `move` may happen from its state
 * now: a start needs someone booked; a no-show is marked only once the slot's grace has passed
 * (the buyer may still be joining late; 422 `no_show_too_early` before, nothing changed).
 */
export function checkMove(
  user: AuthenticatedUser,
  session: SessionDoc | null,
  move: SessionMove,
  now: Date,
  grace: NoShowGrace = NO_SHOW_GRACE,
): SessionDoc {
  if (!session) throw new NotFound('Session');
  assertOwner(user, session.sellerId, 'session');
  const { from } = SESSION_MOVES[move];
  if (session.status !== from) throw new InvalidState(`A ${session.status} session cannot be moved by ${move}`);
  if (move === 'start' && session.participantCount === 0) throw new InvalidState('Nobody is booked on this session');
  if (move === 'no-show') {
    const earliest = noShowFrom(session, grace);
    if (now < earliest) throw new RuleViolation('no_show_too_early', `A no-show can be marked from ${earliest.toISOString()}`);
  }
  return session;
}

/**
 * A buyer disputes a no-show: the session is No Show and the caller has Confirmed bookings on
 * it (`mine`; anyone else, its seller and admins included, is 403), not all disputed already
 * (409). Answers the bookings to flag.
 */
export function checkDispute(
  user: AuthenticatedUser,
  session: SessionDoc | null,
  mine: Array<Pick<BookingDoc, '_id' | 'dispute'>>,
): Array<Pick<BookingDoc, '_id' | 'dispute'>> {
  if (!session) throw new NotFound('Session');
  if (mine.length === 0) throw new Forbidden('Only a buyer booked on this session can dispute it');
  if (session.status !== 'No Show') throw new InvalidState(`A ${session.status} session cannot be disputed; only a no-show can`);
  const open = mine.filter((booking) => !booking.dispute);
  if (open.length === 0) throw new InvalidState('This no-show is already disputed');
  return open;
}

/** What a dispute tells the wallet: hold this booking's capture back for an admin. */
export function disputeEvent(
  session: Pick<SessionDoc, '_id' | 'sellerId'>,
  bookingId: string,
  buyerId: string,
  reason: string,
  at: Date,
  correlationId: string,
): IntegrationEvent {
  return makeEvent(
    'consultation.booking.disputed',
    { bookingId, sessionId: session._id, buyerId, sellerId: session.sellerId, reason, disputedAt: at.toISOString() },
    { source: 'consultation', correlationId },
  );
}

/** Whose sessions a listing shows: an admin all; others theirs as seller or participant. */
export function sessionListScope(user: AuthenticatedUser): { userId: string | null } {
  return { userId: isAdmin(user) ? null : user.id };
}

/** The slot counter a session closes when it leaves Scheduled (older sessions stored none). */
export const slotKeyOf = (session: Pick<SessionDoc, 'slotKey' | 'consultationId' | 'startsAt'>) =>
  session.slotKey ?? slotKey(session.consultationId, session.startsAt);

/** What one paid booking cost its buyer (after any coupon) against its list price. */
export interface BookingPayment {
  bookingId: string;
  buyerId: string;
  paidMinor: number;
  listMinor: number;
}

/** The session's Confirmed bookings, their buyers, and the buyers who paid (their reviews count). */
export interface ConfirmedOf {
  buyerIds: string[];
  bookingIds: string[];
  paidBuyerIds: string[];
  /** Each paid booking's price paid and list price (review weighs them: a coupon that paid most is not a customer's payment). */
  payments: BookingPayment[];
}

/**
 * From the session's Confirmed bookings (the session's own list may hold a leaver): the wallet
 * captures the holds of exactly these bookings; `paidBuyerIds` are the buyers who paid.
 */
export function confirmedOf(
  bookings: Array<Pick<BookingDoc, '_id' | 'buyerId' | 'payment'> & Partial<Pick<BookingDoc, 'subTotalMinor' | 'totalAmountMinor'>>>,
): ConfirmedOf {
  const buyersOf = (list: typeof bookings) => [...new Set(list.map((booking) => booking.buyerId))];
  // Paid: the wallet holds their money (a coupon that made it free is not paying).
  const paid = bookings.filter((booking) => booking.payment === 'held');
  return {
    buyerIds: buyersOf(bookings),
    bookingIds: bookings.map((booking) => booking._id),
    paidBuyerIds: buyersOf(paid),
    payments: paid.map((booking) => ({
      bookingId: booking._id,
      buyerId: booking.buyerId,
      paidMinor: booking.totalAmountMinor ?? 0,
      listMinor: booking.subTotalMinor ?? booking.totalAmountMinor ?? 0,
    })),
  };
}

/** What an end or a no-show tells others (a start tells nobody), naming the Confirmed bookings. */
export function moveEvent(
  session: SessionDoc,
  move: Exclude<SessionMove, 'start'>,
  at: Date,
  confirmed: ConfirmedOf,
  consultationReferenceId: string | undefined,
  correlationId: string,
): IntegrationEvent {
  const { buyerIds, bookingIds, paidBuyerIds, payments } = confirmed;
  const about = { sessionId: session._id, consultationId: session.consultationId, sellerId: session.sellerId, buyerIds, bookingIds };
  const origin = { source: 'consultation', correlationId };
  if (move === 'no-show')
    return makeEvent(
      'consultation.session.no_show',
      { ...about, consultationReferenceId, markedAt: at.toISOString(), paidBuyerIds, payments },
      origin,
    );
  return makeEvent(
    'consultation.session.completed',
    { ...about, consultationReferenceId, endedAt: at.toISOString(), paidBuyerIds, payments },
    origin,
  );
}

/** Sessions whose slot ended before this are overdue for the sweep. */
export const overdueBefore = (now: Date, rules: SessionRules) => new Date(now.getTime() - rules.expiryGraceMs);

/** When the sweep ends an overdue In Progress session: at its slot's end (never before its start). */
export const overdueEnd = (session: Pick<SessionDoc, 'endsAt' | 'startedAt' | 'startsAt'>) =>
  new Date(Math.max(session.endsAt.getTime(), (session.startedAt ?? session.startsAt).getTime()));
