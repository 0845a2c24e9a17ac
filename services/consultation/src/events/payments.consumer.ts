import { SUBSCRIPTIONS } from '@mkt/contracts/consultation';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit/bus';
import type { Bookings } from '../application/bookings.use-cases';

/**
 * The wallet's word on the money of a booking: a cancelled booking's refund reached the buyer
 * → `refundStatus: Refunded` (once: only from Pending). `voidedByAdmin`: an admin gave the whole
 * hold back by hand, nobody cancelled first → the booking is Cancelled and Refunded (once).
 */
export function walletPaymentsConsumer(bookings: Bookings): ConsumerSpec {
  return defineConsumer({
    subscription: SUBSCRIPTIONS['consultation.payments'],
    handlers: {
      'wallet.booking_refund.completed': async (event, { log }) => {
        const at = new Date(event.occurredAt);
        if (event.data.voidedByAdmin) await bookings.cancelVoidedByAdmin(event.data.bookingId, at);
        else await bookings.markRefunded(event.data.bookingId, at);
        const { bookingId, refundAmountMinor, voidedByAdmin } = event.data;
        log.info({ bookingId, refundAmountMinor, voidedByAdmin: voidedByAdmin ?? false }, 'booking refunded');
      },
    },
  });
}
