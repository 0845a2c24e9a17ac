import { randomUUID } from 'node:crypto';
import { makeEvent, newInternalId, newUnderscoreReference } from '@mkt/contracts';
import { InvalidState, isDuplicateKey, type Logger, type OutboxRelay } from '@mkt/kit';
import { Booking, DayPlace, Session, SlotPlace, type BookingDoc, type SessionDoc } from '../db/booking.models';
import type { ConsultationDoc } from '../db/setup.models';
import type { HoldAnswer } from '../payments/wallet.client';
import { SlotUnavailable } from './consultation.errors';
import { releaseCouponUse, releasePlaces } from './places';

/** Why the service cancels a booking by itself, as `cause` says in `consultation.booking.cancelled`. */
export type CancelCause = 'session_expired' | 'voided_by_admin';

/** How a Confirmed booking is cancelled: what goes back, by whom, why, and what was said. */
export interface Cancellation {
  refundMinor: number;
  by: BookingDoc['cancelledBy'];
  cause?: CancelCause;
  /** Nothing is owed back (a free booking, or a hold already given back): Refunded at once. */
  settled: boolean;
  said?: Partial<Pick<BookingDoc, 'cancelReason' | 'cancellationType' | 'cancelNotes'>>;
}

/**
 * The correlation id of the request that made the booking: what its later events (sent by a
 * sweep or a consumer) and logs carry. Bookings made before it was stored get a fresh one,
 * never the booking id passed off as a correlation id.
 */
export function correlationOf(booking: Pick<BookingDoc, 'correlationId'>): string {
  return booking.correlationId ?? randomUUID();
}

/** Which of its counters a booking being made has taken a place (or use) of so far. */
export interface Taken {
  day: boolean;
  slot: boolean;
  coupon: boolean;
  /** Confirming began, which joins the session first: a failure after that leaves the seat. */
  seat: boolean;
}

/**
 * The state changes of one booking after its places are taken, each a guarded single-document
 * write (safe to repeat): confirm (joining its session, with `booking.confirmed`), fail for want
 * of payment, give back its places, seat and coupon use.
 */
export class BookingSteps {
  constructor(
    private readonly outbox: OutboxRelay,
    private readonly log: Logger,
  ) {}

  /** A PaymentPending booking after the wallet's answer: Confirmed, Failed, or still waiting. */
  async applyAnswer(
    booking: BookingDoc,
    answer: HoldAnswer | 'voided',
    consultation: ConsultationDoc,
    correlationId: string,
  ): Promise<BookingDoc> {
    if (answer === 'held') return this.confirm(booking, consultation, correlationId);
    if (answer === 'unreachable') return (await Booking.findById(booking._id).lean<BookingDoc>())!;
    // Given up at the client's request: Cancelled (nothing was kept); otherwise Failed.
    const current = (await Booking.findById(booking._id, { cancelledBy: 1 }).lean<BookingDoc>())!;
    const byClient = answer === 'voided' && current.cancelledBy !== null && current.cancelledBy !== undefined;
    const failed = await Booking.findOneAndUpdate(
      { _id: booking._id, status: 'PaymentPending' },
      { $set: byClient ? { status: 'Cancelled', payment: answer, cancelledAt: new Date() } : { status: 'Failed', payment: answer } },
      { new: true },
    ).lean<BookingDoc>();
    if (!failed) return (await Booking.findById(booking._id).lean<BookingDoc>())!;
    await this.giveBackAll(failed);
    await Booking.updateOne({ _id: booking._id }, { $set: { released: true } });
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
    said: Partial<Pick<BookingDoc, 'cancelReason' | 'cancellationType' | 'cancelNotes'>> = {},
  ): Promise<boolean> {
    const set: Record<string, unknown> = { payment: 'voiding' };
    if (cancelledBy) Object.assign(set, { cancelledBy, ...said });
    const { modifiedCount } = await Booking.updateOne({ _id: booking._id, status: 'PaymentPending', payment: 'pending' }, { $set: set });
    if (modifiedCount === 1) return true;
    const current = await Booking.findById(booking._id, { status: 1, payment: 1 }).lean<BookingDoc>();
    return current?.status === 'PaymentPending' && current.payment === 'voiding';
  }

  /** Joins the slot's session and confirms, with `booking.confirmed`, in one write. */
  async confirm(booking: BookingDoc, consultation: ConsultationDoc, correlationId: string): Promise<BookingDoc> {
    const session = await this.joinSession(booking, consultation);
    const event = makeEvent(
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
    const confirmed = await Booking.findOneAndUpdate(
      paid ? { _id: booking._id, status: 'PaymentPending', payment: 'pending' } : { _id: booking._id, status: 'Pending' },
      { $set: { status: 'Confirmed', sessionId: session._id, payment: paid ? 'held' : 'free' }, $push: { pendingEvents: event } },
      { new: true },
    ).lean<BookingDoc>();
    if (!confirmed) {
      const current = (await Booking.findById(booking._id).lean<BookingDoc>())!;
      if (current.status === 'Confirmed') return current;
      await this.leaveSession(booking);
      throw new InvalidState('The booking was given up while it was being made');
    }
    void this.outbox.flush(Booking, confirmed);
    this.log.info({ bookingId: booking._id, consultationId: consultation._id, paid }, 'booking confirmed');
    return confirmed;
  }

  /** Creates the slot's session or joins it (one session per consultation and start). */
  async joinSession(booking: Omit<BookingDoc, 'createdAt' | 'updatedAt'>, consultation: ConsultationDoc): Promise<SessionDoc> {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        // Only a Scheduled session takes a booking: one that started or ended does not match,
        // and the upsert then collides with it (unique consultation + start) — refused below.
        const session = await Session.findOneAndUpdate(
          { consultationId: consultation._id, startsAt: booking.startsAt, bookingIds: { $ne: booking._id }, status: 'Scheduled' },
          {
            $setOnInsert: {
              _id: newInternalId('ses'),
              referenceId: newUnderscoreReference('SES'),
              sellerId: consultation.sellerId,
              consultationTitle: consultation.title,
              endsAt: booking.endsAt,
              slotKey: booking.slotKey,
            },
            $push: { bookingIds: booking._id, buyerIds: booking.buyerId },
            $inc: { participantCount: booking.places },
          },
          { upsert: true, new: true },
        ).lean<SessionDoc>();
        return session!;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        const existing = await Session.findOne({ consultationId: consultation._id, startsAt: booking.startsAt }).lean<SessionDoc>();
        if (existing?.bookingIds.includes(booking._id)) return existing;
        if (existing && existing.status !== 'Scheduled') throw new SlotUnavailable('The session of this time has already started or ended');
      }
    }
    throw new InvalidState('Could not join the session; try again');
  }

  /**
   * Cancels a Confirmed booking nobody asked to cancel, for the whole amount, with
   * `booking.cancelled` (so the wallet refunds and the CRM adjusts) and its places back:
   * `session_expired` — the seller never held the session; `voided_by_admin` — the wallet already
   * gave the money back (Refunded at once). Guarded by Confirmed: a repeat changes nothing (null).
   */
  async cancelBySystem(booking: BookingDoc, cause: CancelCause, now: Date): Promise<BookingDoc | null> {
    const correlationId = correlationOf(booking);
    const cancelled = await this.cancelConfirmed(
      booking,
      {
        refundMinor: booking.totalAmountMinor,
        by: cause === 'voided_by_admin' ? 'admin' : null,
        cause,
        // Nothing owed back: a free booking, or a hold the wallet has already given back.
        settled: booking.payment !== 'held' || cause === 'voided_by_admin',
      },
      correlationId,
      now,
    );
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
    const cancelled = await Booking.findOneAndUpdate(
      { _id: booking._id, status: 'Confirmed' },
      {
        $set: {
          status: 'Cancelled',
          refundStatus: settled ? 'Refunded' : 'Pending',
          refundedAt: settled ? now : null,
          refundAmountMinor: refundMinor,
          cancelledAt: now,
          cancelledBy: by,
          ...(cause ? { cancelCause: cause } : {}),
          ...said,
        },
        $push: { pendingEvents: event },
      },
      { new: true },
    ).lean<BookingDoc>();
    if (!cancelled) return null;
    await this.release(cancelled);
    void this.outbox.flush(Booking, cancelled);
    return cancelled;
  }

  async leaveSession(booking: BookingDoc): Promise<void> {
    await Session.updateOne(
      { consultationId: booking.consultationId, startsAt: booking.startsAt, bookingIds: booking._id },
      { $pull: { bookingIds: booking._id, buyerIds: booking.buyerId }, $inc: { participantCount: -booking.places } },
    );
  }

  async release(booking: BookingDoc): Promise<void> {
    await releasePlaces(SlotPlace, booking.slotKey, booking._id, booking.places);
    await releasePlaces(DayPlace, booking.dayKey, booking._id, 1);
    await this.leaveSession(booking);
    await Booking.updateOne({ _id: booking._id }, { $set: { released: true } });
  }

  /** A Pending booking a crash left behind: Failed, then everything it may hold given back. */
  async undo(booking: BookingDoc): Promise<void> {
    await Booking.updateOne({ _id: booking._id, status: 'Pending' }, { $set: { status: 'Failed' } });
    await this.giveBackAll(booking);
  }

  /** Everything a failed booking may hold — places, coupon use, session seat — given back (each once). */
  async giveBackAll(booking: BookingDoc): Promise<void> {
    await this.giveBack(booking, { day: true, slot: true, coupon: booking.couponId !== null, seat: true });
  }

  /**
   * What a booking being made took before a later step failed, and only that: it knows what it
   * took, so nothing is asked of counters it never touched. Each release is guarded by the
   * booking's id, so a repeat (the sweep after a crash) changes nothing.
   */
  async giveBack(booking: BookingDoc, taken: Taken): Promise<void> {
    if (taken.slot) await releasePlaces(SlotPlace, booking.slotKey, booking._id, booking.places);
    if (taken.day) await releasePlaces(DayPlace, booking.dayKey, booking._id, 1);
    if (taken.coupon && booking.couponId) await releaseCouponUse(booking.couponId, booking._id);
    if (taken.seat) await this.leaveSession(booking);
  }
}
