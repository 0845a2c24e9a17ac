/** Calendar windows: pure arithmetic on UTC dates (`@mkt/kit/domain` exports it too). */

export type CalendarUnit = 'minute' | 'hour' | 'day' | 'week' | 'month';

/** A calendar window: `key` names it (from its start) and `endsAt` is the next one's start. */
export interface CalendarWindow {
  key: string;
  endsAt: Date;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * The UTC calendar window of `unit` that holds `now`: a minute (`2026-11-21T10:04`), an hour
 * (`2026-11-21T10`), a day
 * (`2026-11-21`), an ISO week from Monday 00:00 (`W2026-11-16`, its Monday) or a month from
 * the 1st 00:00 (`2026-11`).
 */
export function calendarWindow(unit: CalendarUnit, now: Date): CalendarWindow {
  if (unit === 'minute') {
    const start = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS;
    return { key: new Date(start).toISOString().slice(0, 16), endsAt: new Date(start + MINUTE_MS) };
  }
  if (unit === 'hour') {
    const start = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
    return { key: new Date(start).toISOString().slice(0, 13), endsAt: new Date(start + HOUR_MS) };
  }
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  if (unit === 'day') return { key: new Date(day).toISOString().slice(0, 10), endsAt: new Date(day + DAY_MS) };
  if (unit === 'week') {
    const monday = day - ((now.getUTCDay() + 6) % 7) * DAY_MS;
    return { key: `W${new Date(monday).toISOString().slice(0, 10)}`, endsAt: new Date(monday + 7 * DAY_MS) };
  }
  const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  return { key: first.toISOString().slice(0, 7), endsAt: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)) };
}
