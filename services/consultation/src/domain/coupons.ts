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

/** Told to a buyer who holds as many uses of a coupon as one buyer may (they know the coupon). */
export const USED_UP_BY_BUYER = 'You already hold as many uses of this coupon as one buyer may';

/** How many uses one buyer may hold at once: `maxUsesPerBuyer`, 1 when the coupon has none stored. */
export const maxUsesPerBuyerOf = (discount: Pick<DiscountDoc, 'maxUsesPerBuyer'>): number => discount.maxUsesPerBuyer ?? 1;

/**
 * The field of `buyerUses` a buyer's uses are kept under: the id itself when it is only letters,
 * digits, `-` and `_` (user ids are uuids); otherwise `~` and its base64url, so no id can make
 * a path of it (`.`, `$`).
 */
export function buyerUseKey(buyerId: string): string {
  return /^[A-Za-z0-9_-]+$/.test(buyerId) ? buyerId : `~${Buffer.from(buyerId).toString('base64url')}`;
}

/** How many uses of a coupon a buyer holds, by the coupon's own record. */
export const usesHeldBy = (discount: Pick<DiscountDoc, 'buyerUses'>, buyerId: string): number =>
  discount.buyerUses?.[buyerUseKey(buyerId)]?.length ?? 0;

/**
 * Why this buyer may not take another use of a usable coupon, or null: they hold
 * `maxUsesPerBuyer` already (a cancelled booking holds none: its use was given back).
 */
export function buyerCouponProblem(discount: Pick<DiscountDoc, 'maxUsesPerBuyer'>, held: number): string | null {
  return held >= maxUsesPerBuyerOf(discount) ? USED_UP_BY_BUYER : null;
}

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

/** `held`: the uses the user the check is for holds (over the per-buyer limit: not usable for them). */
export function couponCheck(found: DiscountDoc | null, pricing: PricingDoc | null, now: Date, held = 0): CouponCheck {
  const price = pricing?.basePriceMinor ?? 0;
  const problem = couponProblem(found, price, now) ?? (found ? buyerCouponProblem(found, held) : null);
  const discount = problem === UNUSABLE_COUPON ? null : found;
  return { problem, discount, quote: applyCoupon(price, problem ? null : discount), currency: pricing?.currency ?? null };
}
