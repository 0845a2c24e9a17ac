import { randomUUID } from 'node:crypto';
import { bookingHoldBody } from '@mkt/contracts/consultation';
import { InvalidState } from '@mkt/kit/domain';
import type { Logger } from '@mkt/kit/logger';
import { defineFlow, runFlow, type Flow, type FlowRun, type Step } from '@mkt/kit/steps';
import {
  bookingStepStatus,
  cancelWrite,
  confirmWrite,
  givenBackSteps,
  givenUp,
  pastPaymentDeadline,
  systemCancellation,
  unpaidOutcome,
  voidingMark,
  type BookingRun,
  type CancelCause,
  type Cancellation,
  type CancellationSaid,
  type Plan,
} from '../domain/bookings';
import { CouponInvalid, SlotUnavailable } from '../domain/errors';
import { buyerCouponProblem, UNUSABLE_COUPON, usesHeldBy } from '../domain/coupons';
import { bookedAtMost } from '../domain/places';
import type { BookingDoc, BookingStep, ConsultationDoc, NewBooking, SessionDoc } from '../domain/records';
import type { BookingRepository } from '../db/booking.repository';
import type { ConsultationRepository } from '../db/consultation.repository';
import type { DiscountRepository } from '../db/setup.repository';
import type { PlaceRepository } from '../db/place.repository';
import type { SessionRepository } from '../db/session.repository';
import type { HoldAnswer, WalletClient } from '../payments/wallet.client';

/**
 * The correlation id of the request that made the booking: what its later events (sent by a
 * sweep or a consumer) and logs carry. Bookings made before it was stored get a fresh one,
 * never the booking id passed off as a correlation id.
 */
export function correlationOf(booking: Pick<BookingDoc, 'correlationId'>): string {
  return booking.correlationId ?? randomUUID();
}

export interface BookingStores {
  bookings: BookingRepository;
  sessions: SessionRepository;
  places: PlaceRepository;
  discounts: DiscountRepository;
  consultations: ConsultationRepository;
}

/** What a run of the booking flow knows besides the record: who asked, when, and (while booking) the plan. */
export interface BookingContext {
  correlationId: string;
  now: Date;
  /** The request's plan (its consultation, rule set and coupon), when the run makes the booking. */
  plan?: Plan;
}

/**
 * The booking as one flow of kit's step runner (`defineFlow`): take the slot's places, the day's
 * place, the coupon's use, have the wallet hold the total (paid bookings), confirm (the session's
 * seat and `booking.confirmed`). Each step's write is a guarded single-document write, safe to
 * repeat; where each step stands is read from the booking (`bookingStepStatus`). A step refused
 * for good (no place, no coupon use, the payment refused, the session gone), or a booking given
 * up (Failed, Cancelled), turns the flow back: what is done is given back in reverse order, each
 * give-back recorded in the booking's `compensated`, so the sweep, running the flow again,
 * finishes one a crash interrupted.
 */
export class BookingFlow {
  readonly flow: Flow<BookingRun, BookingContext>;

  constructor(
    private readonly stores: BookingStores,
    private readonly wallet: WalletClient,
    private readonly log: Logger,
  ) {
    this.flow = defineFlow<BookingRun, BookingContext>(
      'booking',
      [this.take('slot'), this.take('day'), this.take('coupon'), this.hold(), this.confirm()],
      {
        givenUp,
      },
    );
  }

  /** Runs the booking flow on `run` (what is still to do, or what is still to give back). */
  run(run: BookingRun, context: BookingContext): Promise<FlowRun<BookingRun>> {
    return runFlow(this.flow, run, context);
  }

  /** A booking as the record says it is, for a run of its flow (nothing taken by this request). */
  static of(booking: BookingDoc): BookingRun {
    return { booking, took: [], refused: null, abandoned: false };
  }

  /** Gives back everything a booking may hold (given up: Failed or Cancelled on the record). */
  async giveBack(booking: BookingDoc): Promise<BookingDoc> {
    const run = await this.run(BookingFlow.of(booking), { correlationId: correlationOf(booking), now: new Date() });
    return run.record.booking;
  }

  /** The places of the slot, the place of the day, the coupon's use: each one guarded write. */
  private take(name: 'slot' | 'day' | 'coupon'): Step<BookingRun, BookingContext> {
    const { places, discounts } = this.stores;
    return {
      name,
      opId: (run) => `${run.booking._id}:${name}`,
      status: (run) => bookingStepStatus(run, name),
      run: async (run, _opId, { plan }) => {
        const booking = run.booking;
        if (!plan) throw new InvalidState('A booking’s places are taken only while it is made');
        if (name === 'slot') {
          // The slot first: a slot already taken, the common refusal, then takes nothing to give back.
          const most = bookedAtMost(plan.consultation.maxCapacity, booking.places);
          const taken =
            most !== null && (await places.take('slot', booking.slotKey, booking.consultationId, booking._id, booking.places, most));
          if (!taken) throw new SlotUnavailable('No places left at this time');
        } else if (name === 'day') {
          const most = bookedAtMost(plan.ruleSet.metaData.maxBookingsPerDay, 1);
          const taken = most !== null && (await places.take('day', booking.dayKey, booking.consultationId, booking._id, 1, most));
          if (!taken) throw new SlotUnavailable('The day is fully booked');
        } else if (plan.discount && !(await discounts.takeUse(plan.discount, booking._id, booking.buyerId))) {
          // Refused by one of the two limits: the buyer's own is told to them (they know the coupon).
          const now = await discounts.findById(plan.discount._id);
          throw new CouponInvalid((now && buyerCouponProblem(now, usesHeldBy(now, booking.buyerId))) ?? UNUSABLE_COUPON);
        }
        return { ...run, took: [...run.took, name] };
      },
      failsOn: (err) => err instanceof SlotUnavailable || err instanceof CouponInvalid,
      fail: async (run) => ({ ...run, refused: name }),
      compensate: async (run) => {
        const booking = run.booking;
        if (name === 'slot') await places.release('slot', booking.slotKey, booking._id, booking.places);
        if (name === 'day') await places.release('day', booking.dayKey, booking._id, 1);
        if (name === 'coupon' && booking.couponId) await discounts.releaseUse(booking.couponId, booking._id, booking.buyerId);
        return this.recordCompensated(run, name);
      },
    };
  }

  /**
   * The wallet holds the total (paid bookings). First the move to PaymentPending (from here the
   * booking is never undone by its request: the wallet may be holding); past its deadline, or
   * being voided, the hold is given up instead (void). Held: the confirm records it. Silent: the
   * step stays owed (the booking answers PaymentPending; the sweep asks again). Refused, declined
   * or voided: the booking Failed (Cancelled when a client gave it up), and the flow turns back.
   */
  private hold(): Step<BookingRun, BookingContext> {
    const { bookings } = this.stores;
    return {
      name: 'hold',
      opId: (run) => `${run.booking._id}:hold`,
      status: (run) => bookingStepStatus(run, 'hold'),
      run: async (run, _opId, { now, correlationId }) => {
        let booking = run.booking;
        if (booking.status === 'Pending') {
          // The move's write is all that changes: the booking is not read back.
          const at = new Date();
          if (!(await bookings.moveQuietly(booking._id, { status: 'Pending' }, { status: 'PaymentPending' }, at)))
            throw new InvalidState('The booking was given up while it was being made');
          booking = { ...booking, status: 'PaymentPending', updatedAt: at };
        }
        const late = pastPaymentDeadline(booking, now);
        if (late && !(await this.startVoiding(booking))) return { ...run, booking: (await bookings.findById(booking._id))! };
        const answer = late ? await this.wallet.void(booking._id, correlationId) : await this.askWallet(booking);
        if (answer === 'held') return { ...run, booking: { ...booking, payment: 'held' } }; // recorded by the confirm
        if (answer === 'unreachable') return { ...run, booking };
        return { ...run, booking: await this.unpaid(booking, answer) };
      },
    };
  }

  /**
   * Joins the slot's session and confirms, with `booking.confirmed`, in one write. A session that
   * has left Scheduled meanwhile refuses it for good; a paid booking's hold is then voided first
   * (the wallet silent: the refusal goes up and the sweep finishes the void and the give-back).
   */
  private confirm(): Step<BookingRun, BookingContext> {
    const { bookings, sessions, consultations } = this.stores;
    return {
      name: 'confirm',
      opId: (run) => `${run.booking._id}:confirm`,
      status: (run) => bookingStepStatus(run, 'confirm'),
      run: async (run, _opId, { plan, correlationId }) => {
        const booking = run.booking;
        const consultation = plan?.consultation ?? (await consultations.findById(booking.consultationId));
        if (!consultation) throw new InvalidState('The booking’s consultation is gone');
        const session = await this.joinSession(booking, consultation);
        const write = confirmWrite(booking, consultation, session._id, correlationId);
        const confirmed = await bookings.move(booking._id, write.guard, write.set, write.event);
        if (!confirmed) {
          const current = (await bookings.findById(booking._id))!;
          if (current.status === 'Confirmed') return { ...run, booking: current };
          await sessions.leave(booking);
          throw new InvalidState('The booking was given up while it was being made');
        }
        this.log.info({ bookingId: booking._id, consultationId: consultation._id, paid: write.paid }, 'booking confirmed');
        return { ...run, booking: confirmed };
      },
      failsOn: (err) => err instanceof SlotUnavailable,
      fail: async (run, err, { correlationId }) => {
        const booking = run.booking;
        if (booking.payment === 'free') return { ...run, refused: 'confirm' };
        // Held, but the session will never include the booking: the payment is given up.
        if (await this.startVoiding(booking)) {
          const voided = await this.wallet.void(booking._id, correlationId);
          if (voided === 'voided') {
            this.log.info(
              { bookingId: booking._id, correlationId },
              'held booking refused: its session has left Scheduled; payment voided',
            );
            return { ...run, booking: await this.unpaid(booking, voided) };
          }
        }
        throw err;
      },
      compensate: async (run) => {
        await sessions.leave(run.booking);
        return this.recordCompensated(run, 'confirm');
      },
    };
  }

  /**
   * A give-back recorded on the booking (`compensated`), so a repeat of the flow skips it. A
   * booking still Pending is being made by this request, which drops it after: nothing to record
   * (a crash leaves it Pending, and the sweep gives everything back).
   */
  private async recordCompensated(run: BookingRun, step: BookingStep): Promise<BookingRun> {
    const booking = run.booking;
    const compensated = [...givenBackSteps(booking), step];
    if (booking.status !== 'Pending') await this.stores.bookings.markCompensated(booking._id, step);
    return { ...run, booking: { ...booking, compensated } };
  }

  /** A PaymentPending booking after a refusal or a void: Failed, or Cancelled when a client gave it up. */
  private async unpaid(booking: BookingDoc, answer: 'refused' | 'declined' | 'voided'): Promise<BookingDoc> {
    const { bookings } = this.stores;
    const cancelledBy = await bookings.cancelledBy(booking._id);
    const failed = await bookings.move(booking._id, { status: 'PaymentPending' }, unpaidOutcome(answer, cancelledBy, new Date()));
    if (!failed) return (await bookings.findById(booking._id))!;
    this.log.info({ bookingId: booking._id, payment: answer, status: failed.status }, 'booking not paid; places given back');
    return failed;
  }

  /**
   * A PaymentPending booking the wallet voided (a client's cancel): Failed or Cancelled, then
   * everything it holds given back.
   */
  async voided(booking: BookingDoc): Promise<BookingDoc> {
    const settled = await this.unpaid(booking, 'voided');
    return settled.status === 'PaymentPending' ? settled : this.giveBack(settled);
  }

  /**
   * Gives a PaymentPending booking up before anyone asks the wallet to void it: from here no
   * confirm can succeed (it needs `payment: pending`), so a hold answered late on another
   * replica never confirms a booking whose money went back. False when it is no longer pending.
   */
  async startVoiding(
    booking: BookingDoc,
    cancelledBy: BookingDoc['cancelledBy'] = null,
    said: Partial<CancellationSaid> = {},
  ): Promise<boolean> {
    const { bookings } = this.stores;
    if (await bookings.moveQuietly(booking._id, { status: 'PaymentPending', payment: 'pending' }, voidingMark(cancelledBy, said)))
      return true;
    const current = await bookings.paymentOf(booking._id);
    return current?.status === 'PaymentPending' && current.payment === 'voiding';
  }

  /** Creates the slot's session or joins it (one session per consultation and start). */
  async joinSession(booking: NewBooking, consultation: ConsultationDoc): Promise<Pick<SessionDoc, '_id'>> {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const joined = await this.stores.sessions.join(booking, consultation);
      if ('session' in joined) return joined.session;
      if ('left' in joined) throw new SlotUnavailable('The session of this time has already started or ended');
    }
    throw new InvalidState('Could not join the session; try again');
  }

  /**
   * Cancels a Confirmed booking nobody asked to cancel, for the whole amount, with
   * `booking.cancelled` (so the wallet refunds and the CRM adjusts) and its places back (see
   * `systemCancellation`). Guarded by Confirmed: a repeat changes nothing (null).
   */
  async cancelBySystem(booking: BookingDoc, cause: CancelCause, now: Date): Promise<BookingDoc | null> {
    const correlationId = correlationOf(booking);
    const cancelled = await this.cancelConfirmed(booking, systemCancellation(booking, cause), correlationId, now);
    if (cancelled)
      this.log.info(
        { bookingId: booking._id, cause, correlationId, refundAmountMinor: booking.totalAmountMinor },
        'booking cancelled by the service',
      );
    return cancelled;
  }

  /**
   * A Confirmed booking Cancelled with its refund, in one write with `booking.cancelled` (the
   * wallet refunds from it), then its flow turned back: the seat, the coupon's use (the buyer's
   * again: cancelling cannot use up a coupon for others) and the places given back. Null when it
   * is no longer Confirmed (another move came first).
   */
  async cancelConfirmed(booking: BookingDoc, cancellation: Cancellation, correlationId: string, now: Date): Promise<BookingDoc | null> {
    const { set, event } = cancelWrite(booking, cancellation, correlationId, now);
    const cancelled = await this.stores.bookings.move(booking._id, { status: 'Confirmed' }, set, event);
    if (!cancelled) return null;
    return this.giveBack(cancelled);
  }

  private askWallet(booking: BookingDoc): Promise<HoldAnswer> {
    return this.wallet.hold(bookingHoldBody(booking), correlationOf(booking));
  }
}
