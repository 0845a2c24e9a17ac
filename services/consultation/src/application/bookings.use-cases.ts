import { newInternalId, type CancelBookingBody, type CreateBookingBody, type PageQuery } from '@mkt/contracts/consultation';
import { IdempotentRequestInFlight, type Attempt, type IdempotentRequests } from '@mkt/kit/db';
import { InvalidState } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import type { Logger } from '@mkt/kit/logger';
import { resumeFlow, type FlowRun } from '@mkt/kit/steps';
import { visibleTo } from '../domain/access';
import {
  bookingListScope,
  cancellerOf,
  checkBookable,
  decideCancel,
  earlierAttempt,
  failureOf,
  newBooking,
  owedCheckDue,
  PAYMENT_RETRY_AFTER_MS,
  placeBooking,
  priceBooking,
  readableBooking,
  STUCK_AFTER_MS,
  stuckGivenUp,
  type BookingRun,
  type Canceller,
  type CancellationSaid,
  type OwedCheckSettings,
  type PaymentSettings,
  type Plan,
} from '../domain/bookings';
import { CouponInvalid } from '../domain/errors';
import { buyerCouponProblem, usesHeldBy } from '../domain/coupons';
import { bookingReceiptAmounts, type BookingReceiptAmounts } from '../domain/receipts';
import type { BookingDoc, DiscountDoc } from '../domain/records';
import type { ConsultationRepository } from '../db/consultation.repository';
import type { PricingRepository, RuleSetRepository } from '../db/setup.repository';
import type { WalletClient } from '../payments/wallet.client';
import { BookingFlow, correlationOf, type BookingStores } from './bookings.steps';
import type { CouponChecks } from './coupon-checks.use-cases';

export interface BookingDeps extends BookingStores {
  consultations: ConsultationRepository;
  ruleSets: RuleSetRepository;
  pricing: PricingRepository;
  couponChecks: CouponChecks;
  /** `Idempotency-Key` of `POST /consultations/bookings` (kit's), forgotten by the sweep. */
  requests: IdempotentRequests;
  steps: BookingFlow;
  wallet: WalletClient;
  payments: PaymentSettings;
  /** The sweep's look for bookings that owe a give-back without `owed`. */
  owedCheck: OwedCheckSettings;
  log: Logger;
}

/** Bookings: validated against the schedule and the price, then places taken race-free. */
export class Bookings {
  /** When this process's sweep last looked for bookings owing a give-back without `owed` (null: not yet). */
  private owedCheckedAt: Date | null = null;

  constructor(private readonly deps: BookingDeps) {}

  /**
   * Runs the booking's flow (`BookingFlow`): takes the places (race-free), then — when there is
   * something to pay — has the wallet hold the total before confirming. A place or coupon use
   * refused: what was taken goes back and the booking goes (422). Short of funds: the places go
   * back and the booking is Failed (422). The wallet silent: the booking stays PaymentPending and
   * the sweep finishes it.
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
    // sweep gives up; then its flow: places, coupon use, the wallet's hold, the confirm.
    await bookings.insert(booking);
    const full: BookingDoc = { ...booking, createdAt: now, updatedAt: now };
    let run: FlowRun<BookingRun>;
    try {
      run = await steps.run(BookingFlow.of(full), { correlationId, now, plan });
    } catch (err) {
      // A failure that is no refusal may come from a take the database applied before the call
      // failed: while the booking is still Pending (never undone by a sweep yet: it is younger
      // than its minute), everything it may hold is given back (each give-back guarded by its
      // id: one never taken changes nothing) and it goes. Past Pending the sweep finishes it.
      if ((await bookings.paymentOf(id))?.status === 'Pending') {
        await steps.run({ ...BookingFlow.of(full), abandoned: true }, { correlationId, now, plan });
        await bookings.deletePending(id);
      }
      throw err;
    }
    const made = run.record.booking;
    if (run.failed && made.status === 'Pending') {
      // Refused while taking its places (its takes given back): it never existed for the client.
      await bookings.deletePending(id);
      throw run.failed.error;
    }
    // Failed: the refusal that failed it (the session gone after the hold), else the payment's.
    if (made.status === 'Failed') throw run.failed?.error ?? failureOf(made);
    return made;
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
   * Runs the booking flow again over every booking it may have left unfinished: a Pending one a
   * crash left (older than its minute) is given up (Failed) and gives back everything it may
   * hold; a PaymentPending one asks the wallet again (the hold is idempotent), or gives the
   * payment up (void) at its deadline; a Failed or Cancelled one finishes its give-back. First,
   * `owed` is kept true to the records (`keepOwedTrue`), so the give-back read finds what is owed.
   */
  async sweep(now = new Date()): Promise<void> {
    const { steps, log } = this.deps;
    await this.keepOwedTrue(now);
    await resumeFlow(steps.flow, {
      unfinished: () => this.unfinished(now),
      context: (run) => ({ correlationId: correlationOf(run.booking), now }),
      onError: (err, run) =>
        log.warn({ err, bookingId: run.booking._id, correlationId: run.booking.correlationId }, 'booking flow still unfinished'),
    });
    await this.deps.requests.deleteExpired(now);
  }

  /**
   * Processes of a version before the flag give bookings up and give them back alongside this one
   * (a rolling update, a rollback and the release again) without touching `owed`. Every sweep
   * removes it from the bookings whose last give-back is recorded (they owe nothing, and the
   * sparse index keeps only what is owed); at its first run and then every `owedCheck.everyMs` it
   * looks for given-up bookings owing a give-back without it and flags at most `owedCheck.limit`
   * of them (the rule of the migration `0004-owed-give-backs`), which this sweep then gives back.
   * A failure here is logged and the give-backs already flagged still run.
   */
  private async keepOwedTrue(now: Date): Promise<void> {
    const { bookings, owedCheck, log } = this.deps;
    try {
      const cleared = await bookings.clearGivenBack();
      if (cleared > 0) log.info({ cleared }, 'given-back bookings still flagged owed: flag removed');
      if (!owedCheckDue(this.owedCheckedAt, now, owedCheck.everyMs)) return;
      const flagged = await bookings.flagOwed(owedCheck.limit);
      this.owedCheckedAt = now;
      if (flagged > 0) log.warn({ flagged }, 'given-up bookings owing a give-back found without owed: flagged for the sweep');
    } catch (err) {
      log.warn({ err }, 'the owed flags could not be brought up to date; the next sweep tries again');
    }
  }

  /** The runs the sweep resumes; a Pending booking left by a crash is given up first (one guarded write). */
  private async unfinished(now: Date): Promise<BookingRun[]> {
    const { bookings } = this.deps;
    const runs: BookingRun[] = [];
    for (const booking of await bookings.unfinished(
      new Date(now.getTime() - STUCK_AFTER_MS),
      new Date(now.getTime() - PAYMENT_RETRY_AFTER_MS),
      undefined,
      now,
    )) {
      if (booking.status !== 'Pending') runs.push(BookingFlow.of(booking));
      else if (await bookings.moveQuietly(booking._id, { status: 'Pending' }, stuckGivenUp()))
        runs.push(BookingFlow.of({ ...booking, ...stuckGivenUp() }));
    }
    return runs;
  }

  /**
   * A booking whose payment the wallet has not answered yet: given up (void at the wallet, which
   * returns anything it held), Cancelled with nothing to refund. The wallet silent: 409, and the
   * sweep finishes the void (the booking ends Cancelled then).
   */
  private async cancelUnpaid(booking: BookingDoc, by: Canceller, said: CancellationSaid, correlationId: string): Promise<BookingDoc> {
    const { steps, wallet } = this.deps;
    if (!(await steps.startVoiding(booking, by, said))) throw new InvalidState('The booking’s payment has just been settled; try again');
    if ((await wallet.void(booking._id, correlationId)) !== 'voided')
      throw new InvalidState('The payment is being given up; the booking will be cancelled shortly');
    return steps.voided(booking);
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
