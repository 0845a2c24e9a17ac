import type { RateLimitStats } from '@mkt/contracts/wallet';
import { calendarWindow, RateLimited, type CalendarUnit } from '@mkt/kit/domain';

/**
 * Top-ups and payout requests count against a user's calendar windows in UTC: a day, an ISO
 * week (Monday first) and a month (the periods are kit's `calendarWindow`).
 */
export const WINDOWS = ['daily', 'weekly', 'monthly'] as const;
export type LimitWindow = (typeof WINDOWS)[number];
export type LimitSettings = Record<LimitWindow, number>;

/** The counter of a user's window in a period (`u1:daily:2026-11-21`). */
export const counterKey = (userId: string, window: LimitWindow, periodKey: string) => `${userId}:${window}:${periodKey}`;

const UNITS: Record<LimitWindow, CalendarUnit> = { daily: 'day', weekly: 'week', monthly: 'month' };

/** The user's counter of `window` that holds `now` (UTC calendar day, ISO week, month) and when it ends. */
export function periodOf(userId: string, window: LimitWindow, now: Date): { key: string; endsAt: Date } {
  const period = calendarWindow(UNITS[window], now);
  return { key: counterKey(userId, window, period.key), endsAt: period.endsAt };
}

/** The refusal of a full window: 429 with Retry-After until the window ends. */
export function limitReached(window: LimitWindow, limit: number, endsAt: Date, now: Date): RateLimited {
  return new RateLimited((endsAt.getTime() - now.getTime()) / 1000, `The ${window} limit of ${limit} requests is reached`);
}

/** The stats view of a user's counts per window: what is left never goes below 0. */
export function limitStats(counts: Record<LimitWindow, number>, limits: LimitSettings): RateLimitStats {
  return Object.fromEntries(
    WINDOWS.map((window) => {
      const count = counts[window];
      const limit = limits[window];
      return [window, { count, limit, remaining: Math.max(0, limit - count) }] as const;
    }),
  ) as RateLimitStats;
}
