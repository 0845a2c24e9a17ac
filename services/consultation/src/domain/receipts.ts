import type { BookingDoc, DiscountDoc } from './records';

/** A booking's receipt in minor units: the price before the coupon, the discount, the charge, the refund. */
export interface BookingReceiptAmounts {
  listPriceMinor: number;
  discountMinor: number;
  paidMinor: number;
  coupon: { code: string; name: string } | null;
  refund: { status: BookingDoc['refundStatus']; amountMinor: number | null; refundedAt: Date | null } | null;
}

/**
 * What a booking's receipt says of its money. The list price is the subtotal before any coupon;
 * the discount what the coupon took off it (never below 0); what was paid is the total once the
 * wallet held it (`held`, or a hold being or already given back), 0 for a free booking or one
 * whose payment was never taken. The refund is the consultation's own record of it: the amount
 * decided at the cancel, Pending until the wallet reports it Refunded.
 */
export function bookingReceiptAmounts(
  booking: Pick<
    BookingDoc,
    'subTotalMinor' | 'totalAmountMinor' | 'payment' | 'refundStatus' | 'refundAmountMinor' | 'refundedAt' | 'couponId'
  >,
  discount: Pick<DiscountDoc, 'couponCode' | 'name'> | null,
): BookingReceiptAmounts {
  const charged =
    booking.payment === 'held' || booking.payment === 'voiding' || (booking.payment === 'voided' && booking.refundStatus === 'Refunded');
  const refunded = booking.refundStatus !== null && booking.refundStatus !== undefined;
  return {
    listPriceMinor: booking.subTotalMinor,
    discountMinor: Math.max(0, booking.subTotalMinor - booking.totalAmountMinor),
    paidMinor: charged ? booking.totalAmountMinor : 0,
    coupon: booking.couponId && discount ? { code: discount.couponCode, name: discount.name } : null,
    refund: refunded
      ? { status: booking.refundStatus, amountMinor: booking.refundAmountMinor ?? null, refundedAt: booking.refundedAt ?? null }
      : null,
  };
}
