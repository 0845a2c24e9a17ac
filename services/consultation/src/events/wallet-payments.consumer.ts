import { SUBSCRIPTIONS } from '@mkt/contracts';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit';
import type { Bookings } from '../domain/bookings';

/**
 * The wallet's word on the money of a booking: a cancelled booking's refund reached the buyer
 * → `refundStatus: Refunded` (once: only from Pending). `voidedByAdmin`: an admin gave the whole
 * hold back by hand, nobody cancelled first → the booking is Cancelled and Refunded (once).
 */
export function walletPaymentsConsumer(bookingsOf: () => Bookings | undefined): ConsumerSpec {
  return defineConsumer({
    subscription: SUBSCRIPTIONS['consultation.payments'],
    handlers: {
      'wallet.booking_refund.completed': async (event, { log }) => {
        const bookings = bookingsOf();
        if (!bookings) throw new Error('The service is still starting'); // retried
        const at = new Date(event.occurredAt);
        if (event.data.voidedByAdmin) await bookings.cancelVoidedByAdmin(event.data.bookingId, at);
        else await bookings.markRefunded(event.data.bookingId, at);
        const { bookingId, refundAmountMinor, voidedByAdmin } = event.data;
        log.info({ bookingId, refundAmountMinor, voidedByAdmin: voidedByAdmin ?? false }, 'booking refunded');
      },
    },
  });
}
