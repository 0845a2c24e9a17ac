import { calendarWindow } from '@mkt/kit/domain';
import type { WindowedCounter } from '@mkt/kit/db';
import { COUPON_CHECKS_PER_MINUTE, tooManyCouponChecks } from '../domain/coupons';

/** The coupon-check throttle: per user and calendar minute, on a counter of kit's (one guarded upsert). */
export class CouponChecks {
  constructor(private readonly counter: WindowedCounter) {}

  /**
   * Takes one of the user's coupon checks of the current minute, or refuses it (a refused check
   * does not count, so a client that keeps asking is free again at the next minute).
   */
  async count(userId: string, now = new Date()): Promise<void> {
    const minute = calendarWindow('minute', now);
    if (!(await this.counter.take(`${userId}|${minute.key}`, COUPON_CHECKS_PER_MINUTE, minute.endsAt)))
      throw tooManyCouponChecks(now, minute.endsAt);
  }

  /** Forgets the counters of past minutes (the server does not expire documents by itself). */
  async sweep(now = new Date()): Promise<void> {
    await this.counter.deleteExpired(now);
  }
}
