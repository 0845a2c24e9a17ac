import { isDuplicateKey, RateLimited } from '@mkt/kit';
import { CouponCheck, type DiscountDoc } from '../db/setup.models';

/** Coupon checks one user may make per minute; past it, 429 with Retry-After. */
export const COUPON_CHECKS_PER_MINUTE = 20;
const WINDOW_MS = 60_000;

/**
 * Counts one coupon check of a user in the current minute and refuses it past the limit. The
 * counter is one document per user and minute, raised by `$inc` (atomic across instances);
 * two first checks racing to create it collide on `_id`, and the loser raises the winner's.
 */
export async function countCouponCheck(userId: string, now = new Date()): Promise<void> {
  const windowStart = Math.floor(now.getTime() / WINDOW_MS) * WINDOW_MS;
  const filter = { _id: `${userId}|${windowStart}` };
  const raise = () =>
    CouponCheck.findOneAndUpdate(
      filter,
      { $inc: { count: 1 }, $setOnInsert: { userId, windowStart: new Date(windowStart) } },
      { upsert: true, new: true },
    ).lean();
  const counted = await raise().catch((err: unknown) => {
    if (isDuplicateKey(err)) return raise();
    throw err;
  });
  if ((counted?.count ?? 0) > COUPON_CHECKS_PER_MINUTE)
    throw new RateLimited((windowStart + WINDOW_MS - now.getTime()) / 1000, 'Too many coupon checks; try again in a minute');
}

/** Forgets the counters of past minutes (the server does not expire documents by itself). */
export async function sweepCouponChecks(now = new Date()): Promise<void> {
  await CouponCheck.deleteMany({ windowStart: { $lt: new Date(now.getTime() - 2 * WINDOW_MS) } });
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
