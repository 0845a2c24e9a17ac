import {
  formatMinor,
  makeEvent,
  newUnderscoreReference,
  type CancelBookingBody,
  type CreateBookingBody,
  type IntegrationEvent,
} from '@mkt/contracts/consultation';
import { Forbidden, InvalidField, InvalidState, NotFound } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import { isAdmin, isListed } from './access';
import {
  CancellationClosed,
  CouponInvalid,
  InsufficientFunds,
  NotBookable,
  PaymentDeclined,
  PaymentGivenUp,
  PriceMismatch,
  RefundTooLarge,
  SlotUnavailable,
} from './errors';
import { dayKey, scheduleOf, slotKey } from './consultations';
import { applyCoupon, couponProblem, UNUSABLE_COUPON } from './coupons';
import {
  newBookingOutcome,
  type BookingChange,
  type BookingDoc,
  type BookingGuard,
  type BookingStatus,
  type BookingStep,
  type ConsultationDoc,
  type DiscountDoc,
  type NewBooking,
  type PricingDoc,
  type RuleSetDoc,
  type SessionDoc,
} from './records';
import { findSlot, type Slot } from './slots';

// The booking state machine: Pending (taking places) → Confirmed (free) or PaymentPending (the
// wallet asked) → Confirmed / Failed / Cancelled; Confirmed → Cancelled. Each function decides;
// `application/` reads, calls it, and applies the answer through guarded writes.

/** A Pending booking older than this was left by a crash: the sweep undoes it. */
export const STUCK_AFTER_MS = 60_000;
/** A PaymentPending booking is asked about again this long after its last change. */
export const PAYMENT_RETRY_AFTER_MS = 10_000;

export interface PaymentSettings {
  /** How long a PaymentPending booking is retried before it is given up (never past its start). */
  deadlineMs: number;
}

/** What the wallet said of a hold (see `payments/wallet.client.ts`), or that it was voided. */
export type WalletAnswer = 'held' | 'refused' | 'declined' | 'voided' | 'unreachable';

export type CancellationSaid = Pick<BookingDoc, 'cancelReason' | 'cancellationType' | 'cancelNotes'>;

/** What a cancel request said, kept with the booking (each null when not sent). */
export function cancellationSaid(body: CancelBookingBody): CancellationSaid {
  return { cancelReason: body.reason ?? null, cancellationType: body.cancellationType ?? null, cancelNotes: body.notes ?? null };
}

/** `SellerId` of a booking names the consultation's seller by user id (any case) or USR reference. */
export function namesSeller(key: string, consultation: Pick<ConsultationDoc, 'sellerId' | 'sellerRef'>): boolean {
  return key.toLowerCase() === consultation.sellerId.toLowerCase() || (!!consultation.sellerRef && key === consultation.sellerRef);
}

/**
 * Step 1 of a booking, on the consultation the caller may see: it is listed (else 422
 * `not_bookable`, told only to those who may see an unlisted one), `SellerId` names its seller,
 * and the caller is not that seller.
 */
export function checkBookable(user: AuthenticatedUser, body: CreateBookingBody, consultation: ConsultationDoc): void {
  if (!isListed(consultation)) throw new NotBookable();
  if (!namesSeller(body.SellerId, consultation))
    throw new InvalidField('SellerId is not the seller of this consultation (give their user id or USR reference)', 'SellerId');
  if (user.id === consultation.sellerId) throw new Forbidden('Sellers do not book their own consultations');
}

/** Where and for how much a booking is, before any coupon. */
export interface Placement {
  slot: Slot;
  subTotalMinor: number;
}

/**
 * Step 2: the consultation's rule set is the one named; it has an active price; the date and
 * times (read in the consultation's zone) are one of its slots, in the future; the participants
 * fit. The subtotal is `basePrice × participants`.
 */
export function placeBooking(
  body: CreateBookingBody,
  consultation: ConsultationDoc,
  ruleSet: RuleSetDoc | null,
  pricing: PricingDoc | null,
  now: Date,
): Placement {
  if (!ruleSet || (body.ruleSetId !== ruleSet._id && body.ruleSetId !== ruleSet.referenceId))
    throw new InvalidField('ruleSetId is not the rule set of this consultation', 'ruleSetId');
  if (!pricing?.isActive) throw new NotBookable('This consultation has no active price');
  const slot = findSlot(scheduleOf(consultation, ruleSet), consultation.timezone, body.date, body.startTime, body.endTime);
  if (!slot) throw new SlotUnavailable('This time is not one of the consultation’s slots');
  if (slot.startsAt <= now) throw new SlotUnavailable('This time has passed');
  if (body.participants.length > consultation.maxCapacity) throw new SlotUnavailable(`At most ${consultation.maxCapacity} participants`);
  return { slot, subTotalMinor: pricing.basePriceMinor * body.participants.length };
}

/**
 * Step 3, the money: a named coupon must be usable (any reason it is not reads as the one
 * `coupon_invalid`), then the client's figures must be the server's, compared in minor units.
 * With a coupon, a wrong total does not tell the right one (it would reveal the discount).
 */
export function priceBooking(
  body: CreateBookingBody,
  pricing: PricingDoc,
  subTotalMinor: number,
  discount: DiscountDoc | null,
  now: Date,
): { totalAmountMinor: number } {
  if (body.couponCode && couponProblem(discount, subTotalMinor, now)) throw new CouponInvalid(UNUSABLE_COUPON);
  const quote = applyCoupon(subTotalMinor, discount);
  if (body.currency !== pricing.currency) throw new PriceMismatch('currency', pricing.currency);
  // The contract parsed both to minor units: compared exactly, never as floats.
  if (body.subTotalMinor !== subTotalMinor) throw new PriceMismatch('subTotal', formatMinor(subTotalMinor));
  if (body.totalAmountMinor !== quote.finalMinor) {
    // The expected total after a coupon would tell a guesser the code is right and its discount.
    throw new PriceMismatch('totalAmount', discount ? null : formatMinor(quote.finalMinor));
  }
  return { totalAmountMinor: quote.finalMinor };
}

export interface Plan {
  consultation: ConsultationDoc;
  ruleSet: RuleSetDoc;
  pricing: PricingDoc;
  discount: DiscountDoc | null;
  startsAt: Date;
  endsAt: Date;
  subTotalMinor: number;
  totalAmountMinor: number;
}

/**
 * The booking as first written: Pending, holding nothing yet. Paid ones get their payment
 * deadline: `deadlineMs` after now, never past the slot's start.
 */
export function newBooking(
  id: string,
  user: AuthenticatedUser,
  body: CreateBookingBody,
  plan: Plan,
  settings: { payments: PaymentSettings; correlationId: string; now: Date },
): NewBooking {
  const { consultation, ruleSet } = plan;
  const free = plan.totalAmountMinor === 0;
  return {
    _id: id,
    referenceId: newUnderscoreReference('BK'),
    consultationId: consultation._id,
    ruleSetId: ruleSet._id,
    sellerId: consultation.sellerId,
    buyerId: user.id,
    buyerRef: user.ref,
    status: 'Pending',
    payment: free ? 'free' : 'pending',
    paymentDeadline: free ? null : new Date(Math.min(settings.now.getTime() + settings.payments.deadlineMs, plan.startsAt.getTime())),
    consultationTitle: consultation.title,
    date: body.date,
    startTime: body.startTime,
    endTime: body.endTime,
    startsAt: plan.startsAt,
    endsAt: plan.endsAt,
    slotKey: slotKey(consultation._id, plan.startsAt),
    dayKey: dayKey(consultation._id, plan.startsAt, ruleSet.timezone),
    places: body.participants.length,
    participants: body.participants,
    subTotalMinor: plan.subTotalMinor,
    totalAmountMinor: plan.totalAmountMinor,
    currency: plan.pricing.currency,
    couponId: plan.discount?._id ?? null,
    notes: body.notes ?? null,
    ...newBookingOutcome(),
    correlationId: settings.correlationId,
  };
}

/**
 * A run of the booking's flow: the booking as its record says, and what this request did to it
 * while it is still Pending (its takes are recorded by the move to PaymentPending, or by the
 * free confirm: until then only the request knows them).
 */
export interface BookingRun {
  booking: BookingDoc;
  /** The steps this request did on the booking while it is Pending. */
  took: BookingStep[];
  /** The step refused for good while the booking is Pending (it is then dropped). */
  refused: BookingStep | null;
  /** The request failed for another reason: everything the booking may hold is given back. */
  abandoned: boolean;
}

/** Where a step of the booking flow stands (kit's step status). */
export type BookingStepStatus = 'todo' | 'done' | 'skip' | 'failed' | 'compensated';

/** The booking is given up (Failed, Cancelled, or refused while being made): its flow turns back. */
export function givenUp(run: BookingRun): boolean {
  return run.refused !== null || run.abandoned || run.booking.status === 'Failed' || run.booking.status === 'Cancelled';
}

/**
 * The last give-back of a given-up booking's flow: the flow gives back in reverse order and the
 * slot is its first step, so once `slot` is recorded nothing is owed any more.
 */
export const LAST_GIVE_BACK: BookingStep = 'slot';

/**
 * What every move to Failed or Cancelled sets with its status: the booking owes its give-backs
 * (a given-up booking has taken at least its slot's places) until the write that records the last.
 */
export const OWES_GIVE_BACK = { owed: true } as const satisfies BookingChange;

/** The statuses of a given-up booking: its flow turns back, and it owes its give-backs. */
export const GIVEN_UP_STATUSES = ['Failed', 'Cancelled'] as const satisfies readonly BookingStatus[];

/**
 * Whether a booking owes a give-back, from its record alone: given up (Failed, Cancelled) and its
 * last give-back (`slot`) not recorded. `owed` says so to the sweep's read; a booking a process of
 * a version before the flag gave up owes one without it, and one whose `slot` such a process
 * recorded owes nothing with it.
 */
export function owesGiveBack(booking: Pick<BookingDoc, 'status' | 'compensated'>): boolean {
  return (GIVEN_UP_STATUSES as readonly BookingStatus[]).includes(booking.status) && !givenBackSteps(booking).includes(LAST_GIVE_BACK);
}

/**
 * The sweep's look for bookings that owe a give-back without `owed`: how often (`everyMs`) and
 * how many it flags at most in one look (`limit`).
 */
export interface OwedCheckSettings {
  everyMs: number;
  limit: number;
}

/** How many bookings one look of the sweep flags at most (the next look flags the rest). */
export const OWED_CHECK_LIMIT = 100;

/** The look is due at the sweep's first run in a process, then once `everyMs` has passed since the last. */
export function owedCheckDue(lastAt: Date | null, now: Date, everyMs: number): boolean {
  return lastAt === null || now.getTime() - lastAt.getTime() >= everyMs;
}

/** A Pending booking a crash left, given up by the sweep: Failed, its give-backs owed. */
export function stuckGivenUp(): BookingChange {
  return { status: 'Failed', ...OWES_GIVE_BACK };
}

/** The steps of a booking's flow recorded as given back (none on a booking written before the flow). */
export function givenBackSteps(booking: Pick<BookingDoc, 'compensated'>): BookingStep[] {
  return booking.compensated ?? [];
}

/**
 * Where a step of the booking flow stands, read from the booking (and, while it is Pending,
 * from the request making it): slot, day, coupon, hold, confirm. Given up, every step that may
 * hold something (a place, a use, a seat) is `done` until its give-back is recorded in
 * `compensated`; the hold holds nothing the booking gives back (the wallet gives its money back).
 */
export function bookingStepStatus(run: BookingRun, step: BookingStep): BookingStepStatus {
  const { booking } = run;
  if (step === 'coupon' && booking.couponId === null) return 'skip';
  if (step === 'hold' && booking.payment === 'free') return 'skip';
  if (givenBackSteps(booking).includes(step)) return 'compensated';
  if (run.refused === step) return 'failed';
  if (step === 'hold') {
    if (booking.payment === 'held') return 'done';
    if (booking.payment === 'refused' || booking.payment === 'declined' || booking.payment === 'voided') return 'failed';
    return givenUp(run) ? 'skip' : 'todo';
  }
  if (booking.status === 'Pending') {
    if (run.took.includes(step) || run.abandoned) return 'done';
    return run.refused ? 'skip' : 'todo';
  }
  if (step === 'confirm') return booking.status === 'PaymentPending' ? 'todo' : 'done';
  return 'done';
}

/**
 * A retry under the same Idempotency-Key that took over a dead attempt: the booking that attempt
 * made is the answer — still Pending (the sweep settles it): in flight; Failed: its refusal.
 */
export function earlierAttempt(earlier: BookingDoc | null): { inFlight: true } | { answer: BookingDoc } | { refusal: Error } | null {
  if (!earlier) return null;
  if (earlier.status === 'Pending') return { inFlight: true };
  if (earlier.status === 'Failed') return { refusal: failureOf(earlier) };
  return { answer: earlier };
}

/** What the client is told of a booking that ended Failed for want of payment. */
export function failureOf(booking: Pick<BookingDoc, 'payment'>): Error {
  if (booking.payment === 'refused') return new InsufficientFunds();
  if (booking.payment === 'declined') return new PaymentDeclined();
  return new PaymentGivenUp();
}

/** One booking of the caller's (buyer, seller, admin); a Pending one does not exist yet. */
export function readableBooking(user: AuthenticatedUser, booking: BookingDoc | null): BookingDoc {
  if (!booking || booking.status === 'Pending') throw new NotFound('Booking');
  if (user.id !== booking.buyerId && user.id !== booking.sellerId && !isAdmin(user)) throw new NotFound('Booking');
  return booking;
}

/** Whose listing: an admin sees all; others their bookings as buyer or seller. */
export function bookingListScope(user: AuthenticatedUser, status: string | undefined) {
  return { userId: isAdmin(user) ? null : user.id, statuses: status ? [status] : ['PaymentPending', 'Confirmed', 'Cancelled'] };
}

/** Why the service cancels a booking by itself, as `cause` says in `consultation.booking.cancelled`. */
export type CancelCause = 'session_expired' | 'voided_by_admin';
export type Canceller = 'buyer' | 'seller' | 'admin';

/** How a Confirmed booking is cancelled: what goes back, by whom, why, and what was said. */
export interface Cancellation {
  refundMinor: number;
  by: BookingDoc['cancelledBy'];
  cause?: CancelCause;
  /** Nothing is owed back (a free booking, or a hold already given back): Refunded at once. */
  settled: boolean;
  said?: Partial<CancellationSaid>;
}

export type CancelDecision = { kind: 'unpaid'; by: Canceller; said: CancellationSaid } | { kind: 'confirmed'; cancellation: Cancellation };

/** Who is cancelling: the buyer, the seller, or an admin (anyone else: 403). */
export function cancellerOf(user: AuthenticatedUser, booking: BookingDoc | null): { booking: BookingDoc; by: Canceller } {
  if (!booking || booking.status === 'Pending' || booking.status === 'Failed') throw new NotFound('Booking');
  if (user.id !== booking.buyerId && user.id !== booking.sellerId && !isAdmin(user)) throw new Forbidden('This booking is someone else’s');
  return { booking, by: user.id === booking.buyerId ? 'buyer' : user.id === booking.sellerId ? 'seller' : 'admin' };
}

/**
 * A cancel by the buyer, the seller or an admin. PaymentPending: the payment is given up (void).
 * Confirmed: open until its session starts; the seller refunds in full, the buyer gets what they
 * ask (default all, never more than paid); nothing is owed back for a free booking.
 */
export function decideCancel(
  booking: BookingDoc,
  by: Canceller,
  session: Pick<SessionDoc, 'status'> | null,
  body: CancelBookingBody,
  now: Date,
): CancelDecision {
  if (booking.status === 'PaymentPending') return { kind: 'unpaid', by, said: cancellationSaid(body) };
  if (booking.status !== 'Confirmed') throw new InvalidState(`A ${booking.status} booking cannot be cancelled`);
  if (now >= booking.startsAt || (session && session.status !== 'Scheduled')) throw new CancellationClosed();
  // The contract parsed `refundAmount` to minor units (bad money never gets here: 400).
  const requestedMinor = body.refundAmountMinor;
  const refund = by === 'seller' ? booking.totalAmountMinor : body.refundRequested ? (requestedMinor ?? booking.totalAmountMinor) : 0;
  if (refund > booking.totalAmountMinor) throw new RefundTooLarge();
  // Nothing was paid for a free booking: nothing is owed back.
  return {
    kind: 'confirmed',
    cancellation: { refundMinor: refund, by, settled: booking.payment !== 'held', said: cancellationSaid(body) },
  };
}

/**
 * A cancel nobody asked for, for the whole amount: `session_expired` — the seller never held
 * the session; `voided_by_admin` — the wallet already gave the money back (Refunded at once).
 */
export function systemCancellation(booking: Pick<BookingDoc, 'totalAmountMinor' | 'payment'>, cause: CancelCause): Cancellation {
  return {
    refundMinor: booking.totalAmountMinor,
    by: cause === 'voided_by_admin' ? 'admin' : null,
    cause,
    // Nothing owed back: a free booking, or a hold the wallet has already given back.
    settled: booking.payment !== 'held' || cause === 'voided_by_admin',
  };
}

/** The write of a cancel (guarded by Confirmed) with its `booking.cancelled` event. */
export function cancelWrite(booking: BookingDoc, cancellation: Cancellation, correlationId: string, now: Date) {
  const { refundMinor, by, cause, settled, said = {} } = cancellation;
  const event = makeEvent(
    'consultation.booking.cancelled',
    {
      bookingId: booking._id,
      sellerId: booking.sellerId,
      buyerId: booking.buyerId,
      refundAmountMinor: refundMinor,
      totalAmountMinor: booking.totalAmountMinor,
      ...(by ? { cancelledBy: by } : {}),
      ...(cause ? { cause } : {}),
    },
    { source: 'consultation', correlationId },
  );
  const set: BookingChange = {
    status: 'Cancelled',
    ...OWES_GIVE_BACK,
    refundStatus: settled ? 'Refunded' : 'Pending',
    refundedAt: settled ? now : null,
    refundAmountMinor: refundMinor,
    cancelledAt: now,
    cancelledBy: by,
    ...(cause ? { cancelCause: cause } : {}),
    ...said,
  };
  return { set, event };
}

/** The write of a confirm, guarded by the state it leaves, with `booking.confirmed`. */
export function confirmWrite(booking: NewBooking, consultation: ConsultationDoc, sessionId: string, correlationId: string) {
  const event: IntegrationEvent = makeEvent(
    'consultation.booking.confirmed',
    {
      bookingId: booking._id,
      consultationId: consultation._id,
      sellerId: consultation.sellerId,
      buyerId: booking.buyerId,
      totalAmountMinor: booking.totalAmountMinor,
      currency: booking.currency,
      date: booking.date,
      startTime: booking.startTime,
      consultationCategory: consultation.category,
    },
    { source: 'consultation', correlationId },
  );
  const paid = booking.payment !== 'free';
  // Paid: only while the wallet's answer is awaited (a void under way refuses it); free: while Pending.
  const guard: BookingGuard = paid ? { status: 'PaymentPending', payment: 'pending' } : { status: 'Pending' };
  const set: BookingChange = { status: 'Confirmed', sessionId, payment: paid ? 'held' : 'free' };
  return { paid, guard, set, event };
}

/**
 * A PaymentPending booking after a refusal or a void: given up at the client's request
 * (someone cancelled it): Cancelled, nothing kept; otherwise Failed.
 */
export function unpaidOutcome(
  answer: 'refused' | 'declined' | 'voided',
  cancelledBy: BookingDoc['cancelledBy'] | undefined,
  now: Date,
): BookingChange {
  const byClient = answer === 'voided' && cancelledBy !== null && cancelledBy !== undefined;
  return byClient
    ? { status: 'Cancelled', payment: answer, cancelledAt: now, ...OWES_GIVE_BACK }
    : { status: 'Failed', payment: answer, ...OWES_GIVE_BACK };
}

/** The mark that a PaymentPending booking is given up (and, when someone cancelled, by whom and what they said). */
export function voidingMark(cancelledBy: BookingDoc['cancelledBy'], said: Partial<CancellationSaid>): BookingChange {
  return cancelledBy ? { payment: 'voiding', cancelledBy, ...said } : { payment: 'voiding' };
}

/** A waiting booking the sweep gives up rather than asks about again: a void under way, or past its deadline. */
export function pastPaymentDeadline(booking: Pick<BookingDoc, 'payment' | 'paymentDeadline'>, now: Date): boolean {
  return booking.payment === 'voiding' || (booking.paymentDeadline !== null && now >= booking.paymentDeadline);
}
