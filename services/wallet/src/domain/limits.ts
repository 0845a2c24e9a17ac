/** Calendar windows in UTC: a day, an ISO week (Monday first) and a month. */
export const WINDOWS = ['daily', 'weekly', 'monthly'] as const;
export type LimitWindow = (typeof WINDOWS)[number];

export interface WindowPeriod {
  window: LimitWindow;
  key: string;
  endsAt: Date;
}

const DAY_MS = 86_400_000;

export function periodOf(window: LimitWindow, now: Date): WindowPeriod {
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  if (window === 'daily') return { window, key: day.toISOString().slice(0, 10), endsAt: new Date(day.getTime() + DAY_MS) };
  if (window === 'weekly') {
    const monday = new Date(day.getTime() - ((day.getUTCDay() + 6) % 7) * DAY_MS);
    return { window, key: `W${monday.toISOString().slice(0, 10)}`, endsAt: new Date(monday.getTime() + 7 * DAY_MS) };
  }
  const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  return { window, key: first.toISOString().slice(0, 7), endsAt: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)) };
}

export function secondsUntil(date: Date, now: Date): number {
  return Math.max(1, Math.ceil((date.getTime() - now.getTime()) / 1000));
}
