import type { ConsumerSpec } from '@mkt/kit';
import type { Bookings } from '../domain/bookings';

/**
 * The wallet's word on the money of a booking: a cancelled booking's refund reached the buyer
 * → `refundStatus: Refunded` (once: only from Pending).
 */
export function walletPaymentsConsumer(bookingsOf: () => Bookings | undefined): ConsumerSpec {
  return {
    queue: 'consultation.payments',
    handlers: {
      'wallet.booking_refund.completed': async (event, { log }) => {
        const bookings = bookingsOf();
        if (!bookings) throw new Error('The service is still starting'); // retried
        await bookings.markRefunded(event.data.bookingId, new Date(event.occurredAt));
        log.info({ bookingId: event.data.bookingId, refundAmountMinor: event.data.refundAmountMinor }, 'booking refunded');
      },
    },
  };
}
