import type { RateLimitStats } from '@mkt/contracts';
import { calendarWindow, RateLimited, WindowedCounter, type CalendarUnit } from '@mkt/kit';
import { Usage } from '../db/records.model';

/** Calendar windows in UTC: a day, an ISO week (Monday first) and a month. */
export const WINDOWS = ['daily', 'weekly', 'monthly'] as const;
export type LimitWindow = (typeof WINDOWS)[number];
export type LimitSettings = Record<LimitWindow, number>;

const UNITS: Record<LimitWindow, CalendarUnit> = { daily: 'day', weekly: 'week', monthly: 'month' };

function periodOf(userId: string, window: LimitWindow, now: Date) {
  const period = calendarWindow(UNITS[window], now);
  return { key: `${userId}:${window}:${period.key}`, endsAt: period.endsAt };
}

/**
 * Top-ups and payout requests count against a user's daily, weekly and monthly windows. A
 * place is reserved in all three before the work (atomically, by kit's WindowedCounter), and
 * given back when the work fails, so a refused request never counts.
 */
export class Limits {
  private readonly usage = new WindowedCounter(Usage);

  constructor(private readonly limits: LimitSettings) {}

  async reserve(userId: string, now = new Date()): Promise<() => Promise<void>> {
    const taken: string[] = [];
    const release = async () => {
      for (const key of taken) await this.usage.giveBack(key);
    };
    for (const window of WINDOWS) {
      const period = periodOf(userId, window, now);
      if (!(await this.usage.take(period.key, this.limits[window], period.endsAt))) {
        await release();
        throw new RateLimited(
          (period.endsAt.getTime() - now.getTime()) / 1000,
          `The ${window} limit of ${this.limits[window]} requests is reached`,
        );
      }
      taken.push(period.key);
    }
    return release;
  }

  async stats(userId: string, now = new Date()): Promise<RateLimitStats> {
    const entries = await Promise.all(
      WINDOWS.map(async (window) => {
        const count = await this.usage.count(periodOf(userId, window, now).key);
        const limit = this.limits[window];
        return [window, { count, limit, remaining: Math.max(0, limit - count) }] as const;
      }),
    );
    return Object.fromEntries(entries) as RateLimitStats;
  }

  async deleteExpired(now = new Date()): Promise<void> {
    await this.usage.deleteExpired(now);
  }
}
