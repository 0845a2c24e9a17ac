import { randomUUID } from 'node:crypto';
import { InvalidState } from '@mkt/kit/domain';
import type { Logger } from '@mkt/kit/logger';
import {
  cancelWrite,
  confirmWrite,
  everythingOf,
  systemCancellation,
  unpaidOutcome,
  voidingMark,
  type CancelCause,
  type Cancellation,
  type CancellationSaid,
  type Taken,
  type WalletAnswer,
} from '../domain/bookings';
import { SlotUnavailable } from '../domain/consultation.errors';
import type { BookingDoc, ConsultationDoc, NewBooking, SessionDoc } from '../domain/records';
import type { BookingRepository } from '../db/booking.repository';
import type { DiscountRepository } from '../db/setup.repository';
import type { PlaceRepository } from '../db/place.repository';
import type { SessionRepository } from '../db/session.repository';

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
}

/**
 * The state changes of one booking after its places are taken, each a guarded single-document
 * write (safe to repeat): confirm (joining its session, with `booking.confirmed`), fail for want
 * of payment, give back its places, seat and coupon use. What each writes is decided in
 * `domain/bookings.ts`.
 */
export class BookingSteps {
  constructor(
    private readonly stores: BookingStores,
    private readonly log: Logger,
  ) {}

  /** A PaymentPending booking after the wallet's answer: Confirmed, Failed, or still waiting. */
  async applyAnswer(booking: BookingDoc, answer: WalletAnswer, consultation: ConsultationDoc, correlationId: string): Promise<BookingDoc> {
    const { bookings } = this.stores;
    if (answer === 'held') return this.confirm(booking, consultation, correlationId);
    if (answer === 'unreachable') return (await bookings.findById(booking._id))!;
    // Given up at the client's request: Cancelled (nothing was kept); otherwise Failed.
    const cancelledBy = await bookings.cancelledBy(booking._id);
    const failed = await bookings.move(booking._id, { status: 'PaymentPending' }, unpaidOutcome(answer, cancelledBy, new Date()));
    if (!failed) return (await bookings.findById(booking._id))!;
    await this.giveBackAll(failed);
    await bookings.markReleased(booking._id);
    this.log.info({ bookingId: booking._id, payment: answer, status: failed.status }, 'booking not paid; places given back');
    return { ...failed, released: true };
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

  /** Joins the slot's session and confirms, with `booking.confirmed`, in one write. */
  async confirm(booking: NewBooking, consultation: ConsultationDoc, correlationId: string): Promise<BookingDoc> {
    const { bookings } = this.stores;
    const session = await this.joinSession(booking, consultation);
    const write = confirmWrite(booking, consultation, session._id, correlationId);
    const confirmed = await bookings.move(booking._id, write.guard, write.set, write.event);
    if (!confirmed) {
      const current = (await bookings.findById(booking._id))!;
      if (current.status === 'Confirmed') return current;
      await this.stores.sessions.leave(booking);
      throw new InvalidState('The booking was given up while it was being made');
    }
    this.log.info({ bookingId: booking._id, consultationId: consultation._id, paid: write.paid }, 'booking confirmed');
    return confirmed;
  }

  /** Creates the slot's session or joins it (one session per consultation and start). */
  async joinSession(booking: NewBooking, consultation: ConsultationDoc): Promise<SessionDoc> {
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
   * wallet refunds from it), then its places and seat given back. Null when it is no longer
   * Confirmed (another move came first).
   */
  async cancelConfirmed(booking: BookingDoc, cancellation: Cancellation, correlationId: string, now: Date): Promise<BookingDoc | null> {
    const { bookings } = this.stores;
    const { set, event } = cancelWrite(booking, cancellation, correlationId, now);
    const cancelled = await bookings.move(booking._id, { status: 'Confirmed' }, set, event);
    if (!cancelled) return null;
    await this.release(cancelled);
    return cancelled;
  }

  /**
   * A cancelled booking's places, seat and coupon use given back, then marked released (a
   * coupon use is the buyer's again: cancelling cannot use up a coupon for others). Each release
   * is guarded by the booking's id, so the sweep finishing one a crash interrupted gives nothing
   * back twice.
   */
  async release(booking: BookingDoc): Promise<void> {
    const { places, sessions, bookings, discounts } = this.stores;
    await places.release('slot', booking.slotKey, booking._id, booking.places);
    await places.release('day', booking.dayKey, booking._id, 1);
    if (booking.couponId) await discounts.releaseUse(booking.couponId, booking._id, booking.buyerId);
    await sessions.leave(booking);
    await bookings.markReleased(booking._id);
  }

  /** A Pending booking a crash left behind: Failed, then everything it may hold given back. */
  async undo(booking: BookingDoc): Promise<void> {
    await this.stores.bookings.moveQuietly(booking._id, { status: 'Pending' }, { status: 'Failed' });
    await this.giveBackAll(booking);
  }

  /** Everything a failed booking may hold — places, coupon use, session seat — given back (each once). */
  async giveBackAll(booking: BookingDoc): Promise<void> {
    await this.giveBack(booking, everythingOf(booking));
  }

  /**
   * What a booking being made took before a later step failed, and only that: it knows what it
   * took, so nothing is asked of counters it never touched. Each release is guarded by the
   * booking's id, so a repeat (the sweep after a crash) changes nothing.
   */
  async giveBack(booking: NewBooking, taken: Taken): Promise<void> {
    const { places, discounts, sessions } = this.stores;
    if (taken.slot) await places.release('slot', booking.slotKey, booking._id, booking.places);
    if (taken.day) await places.release('day', booking.dayKey, booking._id, 1);
    if (taken.coupon && booking.couponId) await discounts.releaseUse(booking.couponId, booking._id, booking.buyerId);
    if (taken.seat) await sessions.leave(booking);
  }
}
