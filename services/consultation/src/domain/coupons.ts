import type { DiscountDoc } from '../db/setup.models';

export interface PriceQuote {
  originalMinor: number;
  savingsMinor: number;
  finalMinor: number;
}

/** Why a coupon cannot be used now, or null. */
export function couponProblem(discount: DiscountDoc | null, priceMinor: number, now: Date): string | null {
  if (!discount) return 'Unknown coupon code';
  if (!discount.isActive) return 'The coupon is not active';
  if (now < discount.validFrom) return 'The coupon is not valid yet';
  if (now > discount.validTo) return 'The coupon has expired';
  if (discount.uses >= discount.maxUses) return 'The coupon has been used up';
  if (discount.discountType === 'Fixed' && discount.discountValue > priceMinor) return 'The discount is larger than the price';
  return null;
}

/** The price after a coupon; percentages round to the nearest minor unit. */
export function applyCoupon(priceMinor: number, discount: Pick<DiscountDoc, 'discountType' | 'discountValue'> | null): PriceQuote {
  if (!discount) return { originalMinor: priceMinor, savingsMinor: 0, finalMinor: priceMinor };
  const savings =
    discount.discountType === 'Percentage'
      ? Math.round((priceMinor * discount.discountValue) / 100)
      : Math.min(discount.discountValue, priceMinor);
  return { originalMinor: priceMinor, savingsMinor: savings, finalMinor: priceMinor - savings };
}
