import { pagination } from '@mkt/contracts/wallet';
import type { BookingHolds } from '../application/booking-holds.use-cases';
import type { Payouts } from '../application/payouts.use-cases';
import type { WalletOperations } from './operations';
import { holdQueueItem, payoutQueueItem } from './views';

/**
 * The admins' queues of the wallet (the entries' access lets admins alone in): payouts waiting
 * for their next move, with the four-eyes rule as it applies to the caller, and booking holds
 * overdue or disputed.
 */
export function adminQueueOperations(payouts: Payouts, holds: BookingHolds): WalletOperations<'listPayoutQueue' | 'listHoldQueue'> {
  return {
    listPayoutQueue: async ({ query }, { user }) => {
      const { items, total, counts } = await payouts.queue(query);
      return {
        data: { counts, items: items.map((payout) => payoutQueueItem(user, payout)) },
        message: 'Payouts waiting for an admin',
        pagination: pagination(query, total),
      };
    },
    listHoldQueue: async ({ query }) => {
      const now = new Date();
      const { items, total, counts } = await holds.queue(query, now);
      return {
        data: { counts, items: items.map((record) => holdQueueItem(record, now)) },
        message: 'Booking holds overdue or disputed',
        pagination: pagination(query, total),
      };
    },
  };
}
