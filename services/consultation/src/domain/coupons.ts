import { RateLimited } from '@mkt/kit/domain';
import type { DiscountDoc, PricingDoc } from './records';

/** Coupon checks one user may make per calendar minute; past it, 429 with Retry-After. */
export const COUPON_CHECKS_PER_MINUTE = 20;

/** The refusal of a check past the minute's limit: retry when the minute ends. */
export function tooManyCouponChecks(now: Date, minuteEndsAt: Date): RateLimited {
  return new RateLimited((minuteEndsAt.getTime() - now.getTime()) / 1000, 'Too many coupon checks; try again in a minute');
}

export interface PriceQuote {
  originalMinor: number;
  savingsMinor: number;
  finalMinor: number;
}

/**
 * The one answer for a code that cannot be used now, whatever the cause: an unknown code and an
 * inactive, expired, not yet valid or used-up one read the same, so guessing codes learns nothing.
 */
export const UNUSABLE_COUPON = 'This coupon code cannot be used';

/** Why a coupon cannot be used now, or null. */
export function couponProblem(discount: DiscountDoc | null, priceMinor: number, now: Date): string | null {
  if (!discount || !discount.isActive || now < discount.validFrom || now > discount.validTo || discount.uses >= discount.maxUses)
    return UNUSABLE_COUPON;
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

/** What validate-coupon finds for a code at a price, now (its answer is `couponCheckView`). */
export interface CouponCheck {
  /** Why it cannot be used, or null. */
  problem: string | null;
  /**
   * The coupon as it may be shown: null for a code that cannot be used at all (unknown, inactive,
   * expired, used up), which shows nothing of itself — nor whether the user used it.
   */
  discount: DiscountDoc | null;
  quote: PriceQuote;
  currency: string | null;
}

export function couponCheck(found: DiscountDoc | null, pricing: PricingDoc | null, now: Date): CouponCheck {
  const price = pricing?.basePriceMinor ?? 0;
  const problem = couponProblem(found, price, now);
  const discount = problem === UNUSABLE_COUPON ? null : found;
  return { problem, discount, quote: applyCoupon(price, problem ? null : discount), currency: pricing?.currency ?? null };
}
