import { z } from 'zod';
import { parseConfig, serviceEnv } from '@mkt/kit/runtime';

export const ReviewEnv = serviceEnv(8085).extend({
  /**
   * A review counts in the public rating only when its buyer paid, of their own, at least this
   * share (%) of a booking's list price (coupons and money the seller transferred to them do not
   * count as theirs).
   */
  REVIEW_MIN_PAID_PERCENT: z.coerce.number().int().min(0).max(100).default(50),
  /** … and at least this much (minor units). */
  REVIEW_MIN_PAID_MINOR: z.coerce.number().int().min(0).default(10_00),
});
export type ReviewConfig = z.infer<typeof ReviewEnv>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<ReviewConfig> {
  return parseConfig(ReviewEnv, env);
}
