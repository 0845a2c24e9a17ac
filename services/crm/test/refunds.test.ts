import { cancelled, confirmed, event, log, newUser, useCrm } from './harness';

const crm = useCrm();
const bookingsConsumer = crm.parts.consumers.bookings;
const Relationship = crm.parts.models.relationships;
const handle = (e: { type: string }) =>
  (bookingsConsumer.handlers as Record<string, (event: unknown, ctx: { log: typeof log }) => Promise<void>>)[e.type]!(e, { log });
const refunded = (sellerId: string, buyerId: string, bookingId: string, refundAmountMinor: number) =>
  event('wallet.booking_refund.completed', {
    bookingId,
    sellerId,
    buyerId,
    refundAmountMinor,
    capturedAmountMinor: 500_00 - refundAmountMinor,
    currency: 'ETB',
  });
const totals = async (sellerId: string, buyerId: string) => {
  const r = await Relationship.findOne({ sellerId, buyerId }).lean();
  return r && { totalBookings: r.totalBookings, totalSpentMinor: r.totalSpentMinor };
};

describe('refunds of paid bookings (wallet.booking_refund.completed)', () => {
  test('what the wallet refunded is what counts, once, whatever the order', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    const paid = confirmed(seller.id, buyer.id, 500_00);
    const refund = refunded(seller.id, buyer.id, paid.data.bookingId, 300_00);
    await handle(refund); // the wallet's word may come first
    await handle(paid);
    expect(await totals(seller.id, buyer.id)).toEqual({ totalBookings: 1, totalSpentMinor: 500_00 });
    await handle(cancelled(seller.id, buyer.id, paid.data.bookingId, 350_00));
    await handle(refund);
    expect(await totals(seller.id, buyer.id)).toEqual({ totalBookings: 0, totalSpentMinor: 200_00 });
  });

  test('a cancellation counts the refund asked until the wallet confirms it', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    const paid = confirmed(seller.id, buyer.id, 500_00);
    await handle(paid);
    await handle(cancelled(seller.id, buyer.id, paid.data.bookingId, 500_00));
    expect(await totals(seller.id, buyer.id)).toEqual({ totalBookings: 0, totalSpentMinor: 0 });
    await handle(refunded(seller.id, buyer.id, paid.data.bookingId, 500_00));
    expect(await totals(seller.id, buyer.id)).toEqual({ totalBookings: 0, totalSpentMinor: 0 });
  });
});
