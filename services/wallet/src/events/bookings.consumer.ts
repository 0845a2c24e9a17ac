import { SUBSCRIPTIONS } from '@mkt/contracts/wallet';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit/bus';
import type { Logger } from '@mkt/kit/logger';
import type { BookingHolds } from '../application/booking-holds.use-cases';
import type { SettlementKind } from '../domain/records';

async function settleIfHeld(
  holds: BookingHolds,
  bookingId: string,
  kind: SettlementKind,
  refundMinor: number,
  correlationId: string,
  log: Logger,
  noShow = false,
): Promise<void> {
  // A free booking has no hold: nothing to move.
  if (!(await holds.find(bookingId))) return;
  const record = await holds.settle(bookingId, kind, refundMinor, correlationId, new Date(), { noShow });
  log.info({ bookingId, correlationId, kind, status: record.status, dueAt: record.dueAt }, 'booking hold decided');
}

/**
 * Paid bookings end by events (through consultation's outbox): a completed session or a
 * no-show captures the holds of its bookings for the seller (a no-show's only after its
 * dispute window); a cancellation refunds; a dispute holds the capture back for an admin. The
 * settlement is decided once per booking, so a repeated or late event changes nothing.
 */
export function bookingEventsConsumer(holds: BookingHolds): ConsumerSpec {
  const capture = async (bookingIds: string[] | undefined, correlationId: string, log: Logger, noShow = false) => {
    for (const bookingId of bookingIds ?? []) await settleIfHeld(holds, bookingId, 'capture', 0, correlationId, log, noShow);
  };
  return defineConsumer({
    subscription: SUBSCRIPTIONS['wallet.bookings'],
    handlers: {
      'consultation.session.completed': (event, { log }) => capture(event.data.bookingIds, event.correlationId, log),
      // No-show of the buyer: the seller kept the time, so the booking is paid (README).
      'consultation.session.no_show': (event, { log }) => capture(event.data.bookingIds, event.correlationId, log, true),
      'consultation.booking.disputed': async (event) => {
        await holds.dispute(event.data.bookingId, event.data.reason, new Date(event.data.disputedAt), event.correlationId);
      },
      'consultation.booking.cancelled': (event, { log }) =>
        settleIfHeld(holds, event.data.bookingId, 'cancel', event.data.refundAmountMinor, event.correlationId, log),
    },
  });
}
