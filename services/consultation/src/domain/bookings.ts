import { formatMinor, newInternalId, newUnderscoreReference, type CancelBookingBody, type CreateBookingBody } from '@mkt/contracts';
import {
  InvalidField,
  findPage,
  Forbidden,
  IdempotentRequests,
  IdempotentRequestInFlight,
  InvalidState,
  NotFound,
  type Attempt,
  type AuthenticatedUser,
  type Logger,
  type OutboxRelay,
} from '@mkt/kit';
import type { HoldAnswer, WalletClient } from '../payments/wallet.client';
import { BookingSteps, correlationOf, type Taken } from './booking-steps';
import { Booking, BookingRequestKey, DayPlace, Session, SlotPlace, type BookingDoc, type SessionDoc } from '../db/booking.models';
import {
  Consultation,
  Pricing,
  RuleSet,
  type ConsultationDoc,
  type DiscountDoc,
  type PricingDoc,
  type RuleSetDoc,
} from '../db/setup.models';
import { findByKey, isAdmin, visibleConsultation } from './access';
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
} from './consultation.errors';
import { dayKey, isListed, scheduleOf, slotKey } from './consultations';
import { applyCoupon, countCouponCheck, couponProblem, UNUSABLE_COUPON } from './coupons';
import { takeCouponUse, takePlaces } from './places';
import { sellerCoupon } from './discounts';
import { findSlot } from './slots';

const STUCK_AFTER_MS = 60_000;
/** A PaymentPending booking is asked about again this long after its last change. */
const PAYMENT_RETRY_AFTER_MS = 10_000;

export interface PaymentSettings {
  /** How long a PaymentPending booking is retried before it is given up (never past its start). */
  deadlineMs: number;
}

interface Plan {
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
 * `Idempotency-Key` of `POST /consultations/bookings`, per user: a retry replays the first answer
 * and never holds twice. The key's attempt names the booking, so a retry that takes over a dead
 * attempt finds the booking it made.
 */
export const bookingRequests = new IdempotentRequests(BookingRequestKey, () => newInternalId('bk'));

export type CancellationSaid = Pick<BookingDoc, 'cancelReason' | 'cancellationType' | 'cancelNotes'>;

/** What a cancel request said, kept with the booking (each null when not sent). */
function cancellationSaid(body: CancelBookingBody): CancellationSaid {
  return { cancelReason: body.reason ?? null, cancellationType: body.cancellationType ?? null, cancelNotes: body.notes ?? null };
}

/** Bookings: validated against the schedule and the price, then places taken race-free. */
export class Bookings {
  private readonly steps: BookingSteps;

  constructor(
    private readonly outbox: OutboxRelay,
    private readonly log: Logger,
    private readonly wallet: WalletClient,
    private readonly payments: PaymentSettings,
  ) {
    this.steps = new BookingSteps(outbox, log);
  }

  /**
   * Takes the places (race-free), then — when there is something to pay — has the wallet hold
   * the total before confirming. Short of funds: the places go back and the booking is Failed
   * (422). The wallet silent: the booking stays PaymentPending and the sweep finishes it.
   */
  async create(
    user: AuthenticatedUser,
    body: CreateBookingBody,
    correlationId: string,
    attempt: Attempt = { resourceId: newInternalId('bk'), retaken: false },
    now = new Date(),
  ): Promise<BookingDoc> {
    const id = attempt.resourceId;
    if (attempt.retaken) {
      // An earlier attempt under the same Idempotency-Key died: its booking, if it made one, is the answer.
      const earlier = await Booking.findById(id).lean<BookingDoc>();
      // Still under way (the sweep settles it): answered 409 without being kept as the key's answer.
      if (earlier?.status === 'Pending') throw new IdempotentRequestInFlight();
      if (earlier?.status === 'Failed') throw failureOf(earlier);
      if (earlier) return earlier;
    }
    const plan = await this.plan(user, body, now);
    const { consultation, ruleSet } = plan;
    const places = body.participants.length;
    const booking: Omit<BookingDoc, 'createdAt' | 'updatedAt'> = {
      _id: id,
      referenceId: newUnderscoreReference('BK'),
      consultationId: consultation._id,
      ruleSetId: ruleSet._id,
      sellerId: consultation.sellerId,
      buyerId: user.id,
      buyerRef: user.ref,
      status: 'Pending',
      payment: plan.totalAmountMinor === 0 ? 'free' : 'pending',
      paymentDeadline:
        plan.totalAmountMinor === 0 ? null : new Date(Math.min(now.getTime() + this.payments.deadlineMs, plan.startsAt.getTime())),
      consultationTitle: consultation.title,
      date: body.date,
      startTime: body.startTime,
      endTime: body.endTime,
      startsAt: plan.startsAt,
      endsAt: plan.endsAt,
      slotKey: slotKey(consultation._id, plan.startsAt),
      dayKey: dayKey(consultation._id, plan.startsAt, ruleSet.timezone),
      places,
      participants: body.participants,
      subTotalMinor: plan.subTotalMinor,
      totalAmountMinor: plan.totalAmountMinor,
      currency: plan.pricing.currency,
      couponId: plan.discount?._id ?? null,
      notes: body.notes ?? null,
      sessionId: null,
      refundStatus: null,
      refundAmountMinor: null,
      refundedAt: null,
      cancelledBy: null,
      cancelledAt: null,
      cancelReason: null,
      cancellationType: null,
      cancelNotes: null,
      cancelCause: null,
      correlationId,
      released: false,
      pendingEvents: [],
    };
    // The booking exists (Pending) before it holds anything, so a crash leaves a record the
    // sweeper can undo; places are then taken one by one and given back if a later one fails.
    await Booking.create(booking);
    const full = { ...booking, createdAt: now, updatedAt: now };
    const taken: Taken = { day: false, slot: false, coupon: false, seat: false };
    try {
      await this.takeAll(full, plan, taken);
      if (booking.payment === 'free') {
        taken.seat = true;
        return await this.steps.confirm(full, consultation, correlationId);
      }
    } catch (err) {
      // Still Pending while its places go back: a crash in between is the sweep's undo. Then
      // the booking goes (it never existed for the client); no extra write marks it Failed.
      await this.steps.giveBack(full, taken);
      await Booking.deleteOne({ _id: id, status: 'Pending' });
      throw err;
    }
    // From here on the booking is never undone by this request: the wallet may be holding.
    const waiting = await Booking.findOneAndUpdate(
      { _id: id, status: 'Pending' },
      { $set: { status: 'PaymentPending' } },
      { new: true },
    ).lean<BookingDoc>();
    if (!waiting) throw new InvalidState('The booking was given up while it was being made');
    const answer = await this.askWallet(waiting);
    const settled = await this.settle(waiting, answer, consultation, correlationId);
    if (settled.status === 'Failed') throw failureOf(settled);
    return settled;
  }

  /** A place of the day, places of the slot, a coupon use: each one guarded write, noted in `taken`. */
  private async takeAll(booking: BookingDoc, plan: Plan, taken: Taken): Promise<void> {
    const { consultation, ruleSet, discount } = plan;
    taken.day = await takePlaces(DayPlace, booking.dayKey, consultation._id, booking._id, 1, ruleSet.metaData.maxBookingsPerDay);
    if (!taken.day) throw new SlotUnavailable('The day is fully booked');
    taken.slot = await takePlaces(SlotPlace, booking.slotKey, consultation._id, booking._id, booking.places, consultation.maxCapacity);
    if (!taken.slot) throw new SlotUnavailable('No places left at this time');
    taken.coupon = discount !== null && (await takeCouponUse(discount._id, discount.maxUses, booking._id));
    if (discount && !taken.coupon) throw new CouponInvalid(UNUSABLE_COUPON);
  }

  /** One booking of the caller's (buyer, seller, admin): how clients follow a PaymentPending one. */
  async get(user: AuthenticatedUser, key: string): Promise<BookingDoc> {
    const booking = await findByKey(Booking, key);
    if (!booking || booking.status === 'Pending') throw new NotFound('Booking');
    if (user.id !== booking.buyerId && user.id !== booking.sellerId && !isAdmin(user)) throw new NotFound('Booking');
    return booking;
  }

  /** The refund of a cancelled paid booking reached the buyer's wallet (wallet event). */
  async markRefunded(bookingId: string, at: Date): Promise<void> {
    await Booking.updateOne({ _id: bookingId, refundStatus: 'Pending' }, { $set: { refundStatus: 'Refunded', refundedAt: at } });
  }

  /**
   * An admin voided the hold at the wallet by hand: the whole amount is back with the buyer, so
   * a Confirmed booking is Cancelled (Refunded, places back, `booking.cancelled` for the CRM);
   * one already cancelled just becomes Refunded. Repeats change nothing.
   */
  async cancelVoidedByAdmin(bookingId: string, at: Date): Promise<void> {
    const booking = await Booking.findById(bookingId).lean<BookingDoc>();
    // Voided before this booking's confirm was written: no confirm may land now (it needs
    // `payment: pending`), and the sweep gives the booking up (the wallet answers `voided`).
    if (booking?.status === 'PaymentPending') await this.steps.startVoiding(booking);
    if (booking?.status === 'Confirmed') await this.steps.cancelBySystem(booking, 'voided_by_admin', at);
    await this.markRefunded(bookingId, at);
  }

  async list(user: AuthenticatedUser, query: { page: number; limit: number; status?: string }) {
    const filter: Record<string, unknown> = isAdmin(user) ? {} : { $or: [{ buyerId: user.id }, { sellerId: user.id }] };
    filter.status = query.status ?? { $in: ['PaymentPending', 'Confirmed', 'Cancelled'] };
    return findPage(Booking, filter, query, { startsAt: -1, _id: -1 });
  }

  /**
   * The buyer or the seller (or an admin) cancels a Confirmed booking before its session
   * starts; its places come back and the wallet refunds (by the event). The seller cancelling
   * refunds in full; the buyer gets what they ask (default all, never more than paid).
   */
  async cancel(user: AuthenticatedUser, body: CancelBookingBody, correlationId: string, now = new Date()): Promise<BookingDoc> {
    const booking = await findByKey(Booking, body.bookingId);
    if (!booking || booking.status === 'Pending' || booking.status === 'Failed') throw new NotFound('Booking');
    if (user.id !== booking.buyerId && user.id !== booking.sellerId && !isAdmin(user))
      throw new Forbidden('This booking is someone else’s');
    const by = user.id === booking.buyerId ? 'buyer' : user.id === booking.sellerId ? 'seller' : 'admin';
    if (booking.status === 'PaymentPending') return this.cancelUnpaid(booking, by, cancellationSaid(body), correlationId);
    if (booking.status !== 'Confirmed') throw new InvalidState(`A ${booking.status} booking cannot be cancelled`);
    const session = booking.sessionId ? await Session.findById(booking.sessionId, { status: 1 }).lean<SessionDoc>() : null;
    if (now >= booking.startsAt || (session && session.status !== 'Scheduled')) throw new CancellationClosed();
    // The contract parsed `refundAmount` to minor units (bad money never gets here: 400).
    const requestedMinor = body.refundAmountMinor;
    const refund = by === 'seller' ? booking.totalAmountMinor : body.refundRequested ? (requestedMinor ?? booking.totalAmountMinor) : 0;
    if (refund > booking.totalAmountMinor) throw new RefundTooLarge();
    const cancelled = await this.steps.cancelConfirmed(
      booking,
      // Nothing was paid for a free booking: nothing is owed back.
      { refundMinor: refund, by, settled: booking.payment !== 'held', said: cancellationSaid(body) },
      correlationId,
      now,
    );
    if (!cancelled) throw new InvalidState('The booking is no longer Confirmed');
    return cancelled;
  }

  /**
   * Undoes bookings a crash left Pending; asks the wallet again about PaymentPending ones (the
   * hold is idempotent), giving them up (void) at their deadline; finishes releases a crash
   * interrupted.
   */
  async sweep(now = new Date()): Promise<void> {
    const stuck = await Booking.find({ status: 'Pending', createdAt: { $lt: new Date(now.getTime() - STUCK_AFTER_MS) } })
      .limit(100)
      .lean<BookingDoc[]>();
    for (const booking of stuck) await this.steps.undo(booking);
    const waiting = await Booking.find({ status: 'PaymentPending', updatedAt: { $lt: new Date(now.getTime() - PAYMENT_RETRY_AFTER_MS) } })
      .limit(50)
      .lean<BookingDoc[]>();
    for (const booking of waiting) {
      try {
        const late = booking.payment === 'voiding' || (booking.paymentDeadline !== null && now >= booking.paymentDeadline);
        if (late && !(await this.steps.startVoiding(booking))) continue;
        const answer = late ? await this.wallet.void(booking._id, correlationOf(booking)) : await this.askWallet(booking);
        const consultation = await Consultation.findById(booking.consultationId).lean<ConsultationDoc>();
        if (consultation) await this.settle(booking, answer, consultation, correlationOf(booking));
      } catch (err) {
        this.log.warn({ err, bookingId: booking._id, correlationId: booking.correlationId }, 'payment of a booking still waits');
      }
    }
    for (const booking of await Booking.find({ status: 'Cancelled', released: false }).limit(100).lean<BookingDoc[]>())
      await this.steps.release(booking);
    for (const booking of await Booking.find({ status: 'Failed', released: false }).limit(100).lean<BookingDoc[]>()) {
      await this.steps.giveBackAll(booking);
      await Booking.updateOne({ _id: booking._id }, { $set: { released: true } });
    }
    await bookingRequests.deleteExpired(now);
  }

  /**
   * A booking whose payment the wallet has not answered yet: given up (void at the wallet, which
   * returns anything it held), Cancelled with nothing to refund. The wallet silent: 409, and the
   * sweep finishes the void (the booking ends Cancelled then).
   */
  private async cancelUnpaid(
    booking: BookingDoc,
    by: 'buyer' | 'seller' | 'admin',
    said: CancellationSaid,
    correlationId: string,
  ): Promise<BookingDoc> {
    if (!(await this.steps.startVoiding(booking, by, said)))
      throw new InvalidState('The booking’s payment has just been settled; try again');
    if ((await this.wallet.void(booking._id, correlationId)) !== 'voided')
      throw new InvalidState('The payment is being given up; the booking will be cancelled shortly');
    const consultation = await Consultation.findById(booking.consultationId).lean<ConsultationDoc>();
    return this.steps.applyAnswer(booking, 'voided', consultation!, correlationId);
  }

  /**
   * The wallet's answer applied. A hold whose session has left Scheduled meanwhile (the seller
   * started it while the wallet answered) cannot be confirmed: the payment is given up — voided
   * at the wallet, the booking Failed and its places back (the wallet silent: the sweep finishes
   * the void) — and the client gets 422 `slot_unavailable`. Nothing stays held for a session
   * that will never include the booking.
   */
  private async settle(booking: BookingDoc, answer: HoldAnswer, consultation: ConsultationDoc, correlationId: string): Promise<BookingDoc> {
    try {
      return await this.steps.applyAnswer(booking, answer, consultation, correlationId);
    } catch (err) {
      if (!(err instanceof SlotUnavailable)) throw err;
      if (await this.steps.startVoiding(booking)) {
        const voided = await this.wallet.void(booking._id, correlationId);
        if (voided === 'voided') await this.steps.applyAnswer(booking, voided, consultation, correlationId);
      }
      this.log.info({ bookingId: booking._id, correlationId }, 'held booking refused: its session has left Scheduled; payment voided');
      throw err;
    }
  }

  private askWallet(booking: BookingDoc): Promise<HoldAnswer> {
    return this.wallet.hold(
      {
        bookingId: booking._id,
        buyerId: booking.buyerId,
        buyerRef: booking.buyerRef,
        sellerId: booking.sellerId,
        amountMinor: booking.totalAmountMinor,
        currency: booking.currency,
        // The wallet captures no earlier than the slot's end, whatever a session move says.
        endsAt: booking.endsAt.toISOString(),
      },
      correlationOf(booking),
    );
  }

  private async plan(user: AuthenticatedUser, body: CreateBookingBody, now: Date): Promise<Plan> {
    // An unlisted consultation does not exist for anyone but its seller and admins (no 422 that
    // would tell a stranger it is there); to those it is not bookable.
    const consultation = await visibleConsultation(user, body.consultationId);
    if (!isListed(consultation)) throw new NotBookable();
    if (!namesSeller(body.SellerId, consultation))
      throw new InvalidField('SellerId is not the seller of this consultation (give their user id or USR reference)', 'SellerId');
    if (user.id === consultation.sellerId) throw new Forbidden('Sellers do not book their own consultations');
    const [ruleSet, pricing] = await Promise.all([
      RuleSet.findById(consultation.ruleSetId).lean<RuleSetDoc>(),
      Pricing.findById(consultation.pricingId).lean<PricingDoc>(),
    ]);
    if (!ruleSet || (body.ruleSetId !== ruleSet._id && body.ruleSetId !== ruleSet.referenceId))
      throw new InvalidField('ruleSetId is not the rule set of this consultation', 'ruleSetId');
    if (!pricing?.isActive) throw new NotBookable('This consultation has no active price');
    const slot = findSlot(scheduleOf(consultation, ruleSet), consultation.timezone, body.date, body.startTime, body.endTime);
    if (!slot) throw new SlotUnavailable('This time is not one of the consultation’s slots');
    if (slot.startsAt <= now) throw new SlotUnavailable('This time has passed');
    if (body.participants.length > consultation.maxCapacity) throw new SlotUnavailable(`At most ${consultation.maxCapacity} participants`);
    const subTotalMinor = pricing.basePriceMinor * body.participants.length;
    let discount: DiscountDoc | null = null;
    if (body.couponCode) {
      // Every booking that names a coupon is a coupon check like validate-coupon's, counted
      // before the code is looked up: past the limit the answer is 429 whether the code is right
      // or wrong, so codes cannot be guessed through bookings faster than through validation
      // (issue 20; counting only failures let a 422 for a right code show through the 429s).
      await countCouponCheck(user.id, now);
      discount = await sellerCoupon(consultation.sellerId, body.couponCode);
      if (couponProblem(discount, subTotalMinor, now)) throw new CouponInvalid(UNUSABLE_COUPON);
    }
    const quote = applyCoupon(subTotalMinor, discount);
    if (body.currency !== pricing.currency) throw new PriceMismatch('currency', pricing.currency);
    // The contract parsed both to minor units: compared exactly, never as floats.
    if (body.subTotalMinor !== subTotalMinor) throw new PriceMismatch('subTotal', formatMinor(subTotalMinor));
    if (body.totalAmountMinor !== quote.finalMinor) {
      // The expected total after a coupon would tell a guesser the code is right and its discount.
      throw new PriceMismatch('totalAmount', discount ? null : formatMinor(quote.finalMinor));
    }
    return {
      consultation,
      ruleSet,
      pricing,
      discount,
      startsAt: slot.startsAt,
      endsAt: slot.endsAt,
      subTotalMinor,
      totalAmountMinor: quote.finalMinor,
    };
  }
}

/** `SellerId` of a booking names the consultation's seller by user id (any case) or USR reference. */
function namesSeller(key: string, consultation: Pick<ConsultationDoc, 'sellerId' | 'sellerRef'>): boolean {
  return key.toLowerCase() === consultation.sellerId.toLowerCase() || (!!consultation.sellerRef && key === consultation.sellerRef);
}

/** What the client is told of a booking that ended Failed for want of payment. */
function failureOf(booking: Pick<BookingDoc, 'payment'>): Error {
  if (booking.payment === 'refused') return new InsufficientFunds();
  if (booking.payment === 'declined') return new PaymentDeclined();
  return new PaymentGivenUp();
}
