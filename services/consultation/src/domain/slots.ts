import { DateTime, IANAZone } from 'luxon';
import { WEEKDAYS, type AvailabilityRule } from '@mkt/contracts';

/** What makes a consultation's bookable times. Intervals are wall-clock times in `timezone`. */
export interface Schedule {
  timezone: string;
  rules: AvailabilityRule[];
  durationMinutes: number;
  bufferMinutes: number;
}

export interface Slot {
  startsAt: Date;
  endsAt: Date;
}

export function isValidZone(zone: string): boolean {
  return IANAZone.isValidZone(zone);
}

const minutesOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
const pad = (n: number) => String(n).padStart(2, '0');

/**
 * The wall-clock instant of `date` at `minutes` past midnight in `zone`, or null when that
 * local time does not exist (the hour skipped when clocks go forward). When it exists twice
 * (clocks go back), the first is taken.
 */
export function wallClock(date: string, minutes: number, zone: string): DateTime | null {
  const time = `${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
  const local = DateTime.fromISO(`${date}T${time}`, { zone });
  const wanted = `${date} ${time}`;
  if (!local.isValid || local.toFormat('yyyy-MM-dd HH:mm') !== wanted) return null;
  // The same wall time an hour (or half an hour) earlier is its first occurrence.
  for (const minutesBack of [60, 30]) {
    const earlier = local.minus({ minutes: minutesBack });
    if (earlier.toFormat('yyyy-MM-dd HH:mm') === wanted) return earlier;
  }
  return local;
}

/**
 * Slots starting in [from, to): for each local day, each enabled interval of its weekday is cut
 * into `duration` minutes with `buffer` minutes between, by the wall clock — a 09:00 slot is
 * at 09:00 local on both sides of a daylight-saving change, and a slot whose start does not
 * exist that day is skipped. A slot must end within its interval. With a `limit`, the earliest
 * `limit` slots, and no day is cut past the one that reached it.
 */
export function slotsBetween(schedule: Schedule, from: Date, to: Date, limit = Number.POSITIVE_INFINITY): Slot[] {
  const { timezone, durationMinutes, bufferMinutes } = schedule;
  const byDay = new Map(schedule.rules.map((rule) => [rule.weekday, rule]));
  const slots: Slot[] = [];
  let day = DateTime.fromJSDate(from, { zone: timezone }).startOf('day').minus({ days: 1 });
  const lastDay = DateTime.fromJSDate(to, { zone: timezone }).startOf('day').plus({ days: 1 });
  while (day <= lastDay) {
    const rule = byDay.get(WEEKDAYS[day.weekday - 1]!);
    const date = day.toFormat('yyyy-MM-dd');
    for (const interval of rule?.intervals ?? []) {
      if (!interval.enabled) continue;
      const end = minutesOf(interval.end_time);
      for (let start = minutesOf(interval.start_time); start + durationMinutes <= end; start += durationMinutes + bufferMinutes) {
        const local = wallClock(date, start, timezone);
        if (!local) continue;
        const startsAt = local.toJSDate();
        if (startsAt >= from && startsAt < to) slots.push({ startsAt, endsAt: local.plus({ minutes: durationMinutes }).toJSDate() });
      }
    }
    // Days come in order and a slot starts on its own day: past the limit, later days add nothing.
    if (slots.length >= limit) break;
    day = day.plus({ days: 1 });
  }
  return slots.sort((a, b) => a.startsAt.getTime() - b.startsAt.getTime()).slice(0, limit);
}

/**
 * How many slots `slotsBetween` would list, without listing them (rule-set utilization counts a
 * month of slots for each consultation on every listing). Each local day's slots start within
 * that day, so days are counted one by one: on a day of 24 hours a slot's instant is the day's
 * start plus its wall-clock minutes, plain arithmetic; a day whose clocks change is listed.
 */
export function countSlotsBetween(schedule: Schedule, from: Date, to: Date): number {
  const { timezone, durationMinutes, bufferMinutes } = schedule;
  const byDay = new Map(schedule.rules.map((rule) => [rule.weekday, rule]));
  const fromMs = from.getTime();
  const toMs = to.getTime();
  let count = 0;
  for (let day = DateTime.fromJSDate(from, { zone: timezone }).startOf('day'); day.toMillis() < toMs;) {
    const next = day.plus({ days: 1 });
    const dayStart = day.toMillis();
    if (next.toMillis() - dayStart !== 86_400_000) {
      count += slotsBetween(schedule, new Date(Math.max(fromMs, dayStart)), new Date(Math.min(toMs, next.toMillis()))).length;
    } else {
      for (const interval of byDay.get(WEEKDAYS[day.weekday - 1]!)?.intervals ?? []) {
        if (!interval.enabled) continue;
        const end = minutesOf(interval.end_time);
        for (let start = minutesOf(interval.start_time); start + durationMinutes <= end; start += durationMinutes + bufferMinutes) {
          const at = dayStart + start * 60_000;
          if (at >= fromMs && at < toMs) count += 1;
        }
      }
    }
    day = next;
  }
  return count;
}

/** How a slot reads in a time zone: `date` YYYY-MM-DD, `startTime`/`endTime` HH:MM. */
export function localSlot(slot: Slot, zone: string) {
  const start = DateTime.fromJSDate(slot.startsAt, { zone });
  const end = DateTime.fromJSDate(slot.endsAt, { zone });
  return { date: start.toFormat('yyyy-MM-dd'), startTime: start.toFormat('HH:mm'), endTime: end.toFormat('HH:mm') };
}

/**
 * The slot a booking names (its date and times read in `zone`), if the schedule makes it. On
 * every booking, so it does not list a day's slots: when the booking is read in the schedule's
 * own zone, a slot of that wall-clock time exists iff an enabled interval of that weekday cuts
 * one there (`slotsBetween`'s rule, for one start); otherwise the slots around it are listed.
 */
export function findSlot(schedule: Schedule, zone: string, date: string, startTime: string, endTime: string): Slot | null {
  const start = minutesOf(startTime);
  const local = wallClock(date, start, zone);
  if (!local) return null;
  const slot = zone === schedule.timezone ? slotStartingAt(schedule, local, start) : slotsAround(schedule, local.toJSDate());
  if (!slot || localSlot(slot, zone).endTime !== endTime) return null;
  return slot;
}

function slotStartingAt(schedule: Schedule, local: DateTime, start: number): Slot | null {
  const { durationMinutes, bufferMinutes } = schedule;
  // As in slotsBetween: the last rule of a weekday is the one that counts.
  const rule = schedule.rules.filter((candidate) => candidate.weekday === WEEKDAYS[local.weekday - 1]).at(-1);
  const cut = (rule?.intervals ?? []).some((interval) => {
    const from = minutesOf(interval.start_time);
    return (
      interval.enabled &&
      start >= from &&
      (start - from) % (durationMinutes + bufferMinutes) === 0 &&
      start + durationMinutes <= minutesOf(interval.end_time)
    );
  });
  return cut ? { startsAt: local.toJSDate(), endsAt: local.plus({ minutes: durationMinutes }).toJSDate() } : null;
}

function slotsAround(schedule: Schedule, startsAt: Date): Slot | null {
  const found = slotsBetween(schedule, startsAt, new Date(startsAt.getTime() + 1));
  return found.find((candidate) => candidate.startsAt.getTime() === startsAt.getTime()) ?? null;
}

/** Midnight to midnight of local dates `from`..`to` (inclusive) in `zone`. */
export function localDateRange(from: string, to: string, zone: string): { start: Date; end: Date } {
  const start = DateTime.fromISO(from, { zone }).startOf('day');
  const end = DateTime.fromISO(to, { zone }).startOf('day').plus({ days: 1 });
  return { start: start.toJSDate(), end: end.toJSDate() };
}
