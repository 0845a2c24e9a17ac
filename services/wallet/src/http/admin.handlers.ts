import { HoldQueueQuery, ok, pagination, PayoutQueueQuery } from '@mkt/contracts';
import { currentUser, handle, type MountOptions } from '@mkt/kit';
import type { BookingHolds } from '../application/booking-holds';
import type { Payouts } from '../application/payouts';
import { holdQueueItem, payoutQueueItem } from './views';

/**
 * The admins' queues of the wallet (the entries' access lets admins alone in): payouts waiting
 * for their next move, with the four-eyes rule as it applies to the caller, and booking holds
 * overdue or disputed.
 */
export function adminQueueHandlers(payouts: Payouts, holds: BookingHolds): MountOptions['handlers'] {
  return {
    'GET /wallets/admin/payout-requests': handle({ query: PayoutQueueQuery }, async (input, req, res) => {
      const admin = currentUser(req);
      const { items, total, counts } = await payouts.queue(input.query);
      const data = { counts, items: items.map((payout) => payoutQueueItem(admin, payout)) };
      res.json(ok(data, 'Payouts waiting for an admin', pagination(input.query, total)));
    }),
    'GET /wallets/admin/booking-holds': handle({ query: HoldQueueQuery }, async (input, _req, res) => {
      const now = new Date();
      const { items, total, counts } = await holds.queue(input.query, now);
      const data = { counts, items: items.map((record) => holdQueueItem(record, now)) };
      res.json(ok(data, 'Booking holds overdue or disputed', pagination(input.query, total)));
    }),
  };
}
