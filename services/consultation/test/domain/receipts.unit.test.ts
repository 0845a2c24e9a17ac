import { bookingReceiptAmounts } from '../../src/domain/receipts';
import type { BookingDoc } from '../../src/domain/records';

/** What a booking's receipt says of its money, without a database. */
describe('a booking receipt’s amounts', () => {
  const booking = (fields: Partial<BookingDoc> = {}) => ({
    subTotalMinor: 500_00,
    totalAmountMinor: 450_00,
    payment: 'held' as BookingDoc['payment'],
    refundStatus: null,
    refundAmountMinor: null,
    refundedAt: null,
    couponId: 'dis_1',
    ...fields,
  });
  const coupon = { couponCode: 'LAUNCH10', name: 'Launch' };

  it('a paid booking with a coupon: list price, the coupon, its discount, what was held', () => {
    expect(bookingReceiptAmounts(booking(), coupon)).toEqual({
      listPriceMinor: 500_00,
      discountMinor: 50_00,
      paidMinor: 450_00,
      coupon: { code: 'LAUNCH10', name: 'Launch' },
      refund: null,
    });
  });

  it('nothing paid for a free booking or one whose payment was never taken', () => {
    for (const payment of ['free', 'pending', 'refused', 'declined', 'voided'] as const)
      expect(bookingReceiptAmounts(booking({ payment }), coupon).paidMinor).toBe(0);
  });

  it('a hold the wallet gave back in full (voided, Refunded) was paid and refunded', () => {
    const at = new Date('2026-11-20T10:00:00.000Z');
    const amounts = bookingReceiptAmounts(
      booking({ payment: 'voided', refundStatus: 'Refunded', refundAmountMinor: 450_00, refundedAt: at }),
      null,
    );
    expect(amounts).toMatchObject({ paidMinor: 450_00, coupon: null, refund: { status: 'Refunded', amountMinor: 450_00, refundedAt: at } });
  });

  it('a refund still Pending shows its amount; no discount is ever negative', () => {
    expect(bookingReceiptAmounts(booking({ refundStatus: 'Pending', refundAmountMinor: 200_00 }), coupon).refund).toEqual({
      status: 'Pending',
      amountMinor: 200_00,
      refundedAt: null,
    });
    expect(bookingReceiptAmounts(booking({ totalAmountMinor: 600_00, couponId: null }), null)).toMatchObject({
      discountMinor: 0,
      coupon: null,
    });
  });
});
