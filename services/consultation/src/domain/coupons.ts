import { calendarWindow, RateLimited, WindowedCounter } from '@mkt/kit';
import { CouponCheck, type DiscountDoc } from '../db/setup.models';

/** Coupon checks one user may make per calendar minute; past it, 429 with Retry-After. */
export const COUPON_CHECKS_PER_MINUTE = 20;

const couponChecks = new WindowedCounter(CouponCheck);

/**
 * Takes one of the user's coupon checks of the current minute, or refuses it (a refused check
 * does not count, so a client that keeps asking is free again at the next minute).
 */
export async function countCouponCheck(userId: string, now = new Date()): Promise<void> {
  const minute = calendarWindow('minute', now);
  if (!(await couponChecks.take(`${userId}|${minute.key}`, COUPON_CHECKS_PER_MINUTE, minute.endsAt)))
    throw new RateLimited((minute.endsAt.getTime() - now.getTime()) / 1000, 'Too many coupon checks; try again in a minute');
}

/** Forgets the counters of past minutes (the server does not expire documents by itself). */
export async function sweepCouponChecks(now = new Date()): Promise<void> {
  await couponChecks.deleteExpired(now);
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
