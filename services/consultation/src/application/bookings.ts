import { newInternalId, type CancelBookingBody, type CreateBookingBody, type PageQuery } from '@mkt/contracts';
import { IdempotentRequestInFlight, type Attempt, type IdempotentRequests } from '@mkt/kit/db';
import { InvalidState } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import type { Logger } from '@mkt/kit/logger';
import { visibleTo } from '../domain/access';
import {
  bookingListScope,
  cancellerOf,
  checkBookable,
  decideCancel,
  earlierAttempt,
  everythingOf,
  failureOf,
  newBooking,
  pastPaymentDeadline,
  PAYMENT_RETRY_AFTER_MS,
  placeBooking,
  priceBooking,
  readableBooking,
  STUCK_AFTER_MS,
  type Canceller,
  type CancellationSaid,
  type PaymentSettings,
  type Plan,
  type Taken,
} from '../domain/bookings';
import { CouponInvalid, SlotUnavailable } from '../domain/consultation.errors';
import { buyerCouponProblem, UNUSABLE_COUPON, usesHeldBy } from '../domain/coupons';
import { bookedAtMost } from '../domain/places';
import { bookingReceiptAmounts, type BookingReceiptAmounts } from '../domain/receipts';
import type { BookingDoc, ConsultationDoc, DiscountDoc, NewBooking } from '../domain/records';
import type { ConsultationRepository } from '../db/consultation.repository';
import type { PricingRepository, RuleSetRepository } from '../db/setup.repository';
import type { HoldAnswer, WalletClient } from '../payments/wallet.client';
import { correlationOf, type BookingSteps, type BookingStores } from './booking-steps';
import type { CouponChecks } from './coupon-checks';

export interface BookingDeps extends BookingStores {
  consultations: ConsultationRepository;
  ruleSets: RuleSetRepository;
  pricing: PricingRepository;
  couponChecks: CouponChecks;
  /** `Idempotency-Key` of `POST /consultations/bookings` (kit's), forgotten by the sweep. */
  requests: IdempotentRequests;
  steps: BookingSteps;
  wallet: WalletClient;
  payments: PaymentSettings;
  log: Logger;
}

/** Bookings: validated against the schedule and the price, then places taken race-free. */
export class Bookings {
  constructor(private readonly deps: BookingDeps) {}

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
    const { bookings, steps } = this.deps;
    const id = attempt.resourceId;
    if (attempt.retaken) {
      // An earlier attempt under the same Idempotency-Key died: its booking, if it made one, is the answer.
      const earlier = earlierAttempt(await bookings.findById(id));
      // Still under way (the sweep settles it): answered 409 without being kept as the key's answer.
      if (earlier && 'inFlight' in earlier) throw new IdempotentRequestInFlight();
      if (earlier && 'refusal' in earlier) throw earlier.refusal;
      if (earlier) return earlier.answer;
    }
    const plan = await this.plan(user, body, now);
    const booking = newBooking(id, user, body, plan, { payments: this.deps.payments, correlationId, now });
    // The booking exists (Pending) before it holds anything, so a crash leaves a record the
    // sweeper can undo; places are then taken one by one and given back if a later one fails.
    await bookings.insert(booking);
    const full = { ...booking, createdAt: now, updatedAt: now };
    const taken: Taken = { day: false, slot: false, coupon: false, seat: false };
    try {
      await this.takeAll(full, plan, taken);
      if (booking.payment === 'free') {
        taken.seat = true;
        return await steps.confirm(full, plan.consultation, correlationId);
      }
    } catch (err) {
      // Still Pending while its places go back: a crash in between is the sweep's undo. Then
      // the booking goes (it never existed for the client); no extra write marks it Failed.
      // A refusal knows what was taken; any other failure may come from a take the database
      // applied before the call failed, so every counter is given back (each release is guarded
      // by the booking's id: one never taken changes nothing).
      const refused = err instanceof SlotUnavailable || err instanceof CouponInvalid;
      await steps.giveBack(full, refused ? taken : { ...everythingOf(full), seat: taken.seat });
      await bookings.deletePending(id);
      throw err;
    }
    // From here on the booking is never undone by this request: the wallet may be holding.
    const waiting = await bookings.move(id, { status: 'Pending' }, { status: 'PaymentPending' });
    if (!waiting) throw new InvalidState('The booking was given up while it was being made');
    const answer = await this.askWallet(waiting);
    const settled = await this.settle(waiting, answer, plan.consultation, correlationId);
    if (settled.status === 'Failed') throw failureOf(settled);
    return settled;
  }

  /** A place of the day, places of the slot, a coupon use: each one guarded write, noted in `taken`. */
  private async takeAll(booking: NewBooking, plan: Plan, taken: Taken): Promise<void> {
    const { places, discounts } = this.deps;
    const { consultation, ruleSet, discount } = plan;
    // The slot first: a slot already taken, the common refusal, then takes nothing
    // that would have to be given back.
    const slotMost = bookedAtMost(consultation.maxCapacity, booking.places);
    taken.slot = slotMost !== null && (await places.take('slot', booking.slotKey, consultation._id, booking._id, booking.places, slotMost));
    if (!taken.slot) throw new SlotUnavailable('No places left at this time');
    const dayMost = bookedAtMost(ruleSet.metaData.maxBookingsPerDay, 1);
    taken.day = dayMost !== null && (await places.take('day', booking.dayKey, consultation._id, booking._id, 1, dayMost));
    if (!taken.day) throw new SlotUnavailable('The day is fully booked');
    taken.coupon = discount !== null && (await discounts.takeUse(discount, booking._id, booking.buyerId));
    if (discount && !taken.coupon) {
      // Refused by one of the two limits: the buyer's own is told to them (they know the coupon).
      const now = await discounts.findById(discount._id);
      throw new CouponInvalid((now && buyerCouponProblem(now, usesHeldBy(now, booking.buyerId))) ?? UNUSABLE_COUPON);
    }
  }

  /** One booking of the caller's (buyer, seller, admin): how clients follow a PaymentPending one. */
  async get(user: AuthenticatedUser, key: string): Promise<BookingDoc> {
    return readableBooking(user, await this.deps.bookings.findByKey(key));
  }

  /** A booking's receipt: its buyer, its seller or an admin (others 404, as for the booking). */
  async receipt(user: AuthenticatedUser, key: string): Promise<{ booking: BookingDoc; amounts: BookingReceiptAmounts }> {
    const booking = readableBooking(user, await this.deps.bookings.findByKey(key));
    const discount = booking.couponId ? await this.deps.discounts.findById(booking.couponId) : null;
    return { booking, amounts: bookingReceiptAmounts(booking, discount) };
  }

  /** The refund of a cancelled paid booking reached the buyer's wallet (wallet event). */
  async markRefunded(bookingId: string, at: Date): Promise<void> {
    await this.deps.bookings.markRefunded(bookingId, at);
  }

  /**
   * An admin voided the hold at the wallet by hand: the whole amount is back with the buyer, so
   * a Confirmed booking is Cancelled (Refunded, places back, `booking.cancelled` for the CRM);
   * one already cancelled just becomes Refunded. Repeats change nothing.
   */
  async cancelVoidedByAdmin(bookingId: string, at: Date): Promise<void> {
    const { bookings, steps } = this.deps;
    const booking = await bookings.findById(bookingId);
    // Voided before this booking's confirm was written: no confirm may land now (it needs
    // `payment: pending`), and the sweep gives the booking up (the wallet answers `voided`).
    if (booking?.status === 'PaymentPending') await steps.startVoiding(booking);
    if (booking?.status === 'Confirmed') await steps.cancelBySystem(booking, 'voided_by_admin', at);
    await this.markRefunded(bookingId, at);
  }

  /** The caller's bookings (an admin: everyone's); `disputed`: only those whose no-show the buyer disputes. */
  list(user: AuthenticatedUser, query: PageQuery & { status?: string; disputed?: 'true' }) {
    return this.deps.bookings.page({ ...bookingListScope(user, query.status), disputed: query.disputed === 'true' }, query);
  }

  /**
   * The buyer or the seller (or an admin) cancels a Confirmed booking before its session
   * starts; its places come back and the wallet refunds (by the event). See `decideCancel`.
   */
  async cancel(user: AuthenticatedUser, body: CancelBookingBody, correlationId: string, now = new Date()): Promise<BookingDoc> {
    const { bookings, sessions, steps } = this.deps;
    const { booking, by } = cancellerOf(user, await bookings.findByKey(body.bookingId));
    const session = booking.status === 'Confirmed' && booking.sessionId ? await sessions.statusOf(booking.sessionId) : null;
    const decision = decideCancel(booking, by, session, body, now);
    if (decision.kind === 'unpaid') return this.cancelUnpaid(booking, decision.by, decision.said, correlationId);
    const cancelled = await steps.cancelConfirmed(booking, decision.cancellation, correlationId, now);
    if (!cancelled) throw new InvalidState('The booking is no longer Confirmed');
    return cancelled;
  }

  /**
   * Undoes bookings a crash left Pending; asks the wallet again about PaymentPending ones (the
   * hold is idempotent), giving them up (void) at their deadline; finishes releases a crash
   * interrupted.
   */
  async sweep(now = new Date()): Promise<void> {
    const { bookings, consultations, steps, wallet, log } = this.deps;
    for (const booking of await bookings.stuckPending(new Date(now.getTime() - STUCK_AFTER_MS))) await steps.undo(booking);
    for (const booking of await bookings.waitingPayment(new Date(now.getTime() - PAYMENT_RETRY_AFTER_MS))) {
      try {
        const late = pastPaymentDeadline(booking, now);
        if (late && !(await steps.startVoiding(booking))) continue;
        const answer = late ? await wallet.void(booking._id, correlationOf(booking)) : await this.askWallet(booking);
        const consultation = await consultations.findById(booking.consultationId);
        if (consultation) await this.settle(booking, answer, consultation, correlationOf(booking));
      } catch (err) {
        log.warn({ err, bookingId: booking._id, correlationId: booking.correlationId }, 'payment of a booking still waits');
      }
    }
    for (const booking of await bookings.unreleased('Cancelled')) await steps.release(booking);
    for (const booking of await bookings.unreleased('Failed')) {
      await steps.giveBackAll(booking);
      await bookings.markReleased(booking._id);
    }
    await this.deps.requests.deleteExpired(now);
  }

  /**
   * A booking whose payment the wallet has not answered yet: given up (void at the wallet, which
   * returns anything it held), Cancelled with nothing to refund. The wallet silent: 409, and the
   * sweep finishes the void (the booking ends Cancelled then).
   */
  private async cancelUnpaid(booking: BookingDoc, by: Canceller, said: CancellationSaid, correlationId: string): Promise<BookingDoc> {
    const { steps, wallet, consultations } = this.deps;
    if (!(await steps.startVoiding(booking, by, said))) throw new InvalidState('The booking’s payment has just been settled; try again');
    if ((await wallet.void(booking._id, correlationId)) !== 'voided')
      throw new InvalidState('The payment is being given up; the booking will be cancelled shortly');
    const consultation = await consultations.findById(booking.consultationId);
    return steps.applyAnswer(booking, 'voided', consultation!, correlationId);
  }

  /**
   * The wallet's answer applied. A hold whose session has left Scheduled meanwhile (the seller
   * started it while the wallet answered) cannot be confirmed: the payment is given up — voided
   * at the wallet, the booking Failed and its places back (the wallet silent: the sweep finishes
   * the void) — and the client gets 422 `slot_unavailable`. Nothing stays held for a session
   * that will never include the booking.
   */
  private async settle(booking: BookingDoc, answer: HoldAnswer, consultation: ConsultationDoc, correlationId: string): Promise<BookingDoc> {
    const { steps, wallet, log } = this.deps;
    try {
      return await steps.applyAnswer(booking, answer, consultation, correlationId);
    } catch (err) {
      if (!(err instanceof SlotUnavailable)) throw err;
      if (await steps.startVoiding(booking)) {
        const voided = await wallet.void(booking._id, correlationId);
        if (voided === 'voided') await steps.applyAnswer(booking, voided, consultation, correlationId);
      }
      log.info({ bookingId: booking._id, correlationId }, 'held booking refused: its session has left Scheduled; payment voided');
      throw err;
    }
  }

  private askWallet(booking: BookingDoc): Promise<HoldAnswer> {
    return this.deps.wallet.hold(
      {
        bookingId: booking._id,
        buyerId: booking.buyerId,
        buyerRef: booking.buyerRef,
        sellerId: booking.sellerId,
        amountMinor: booking.totalAmountMinor,
        currency: booking.currency,
        // The wallet captures no earlier than the slot's end, whatever a session move says.
        endsAt: booking.endsAt.toISOString(),
        consultationId: booking.consultationId,
      },
      correlationOf(booking),
    );
  }

  /**
   * What a booking is for, decided in three steps (`domain/bookings.ts`) around the reads: the
   * consultation (an unlisted one does not exist for anyone but its seller and admins: no 422
   * that would tell a stranger it is there), then its rule set and pricing (read with it, in
   * the same command), then the coupon.
   */
  private async plan(user: AuthenticatedUser, body: CreateBookingBody, now: Date): Promise<Plan> {
    const { consultations, couponChecks, discounts } = this.deps;
    // One read: the consultation with its rule set and pricing joined.
    const read = await consultations.forBooking(body.consultationId);
    const consultation = visibleTo(user, read.consultation);
    checkBookable(user, body, consultation);
    const { ruleSet, pricing } = read;
    const { slot, subTotalMinor } = placeBooking(body, consultation, ruleSet, pricing, now);
    let discount: DiscountDoc | null = null;
    if (body.couponCode) {
      // Every booking that names a coupon is a coupon check like validate-coupon's, counted
      // before the code is looked up: past the limit the answer is 429 whether the code is right
      // or wrong, so codes cannot be guessed through bookings faster than through validation
      // (counting only failures let a 422 for a right code show through the 429s).
      await couponChecks.count(user.id, now);
      discount = await discounts.sellerCoupon(consultation.sellerId, body.couponCode);
    }
    const { totalAmountMinor } = priceBooking(body, pricing!, subTotalMinor, discount, now);
    // The buyer's own limit, as read (the use is taken under it atomically later).
    const buyerProblem = discount && buyerCouponProblem(discount, usesHeldBy(discount, user.id));
    if (buyerProblem) throw new CouponInvalid(buyerProblem);
    return {
      consultation,
      ruleSet: ruleSet!,
      pricing: pricing!,
      discount,
      startsAt: slot.startsAt,
      endsAt: slot.endsAt,
      subTotalMinor,
      totalAmountMinor,
    };
  }
}
