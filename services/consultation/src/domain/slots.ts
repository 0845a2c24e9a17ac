import { DateTime, IANAZone } from 'luxon';
import { WEEKDAYS, type AvailabilityRule } from '@mkt/contracts/consultation';
import { DAY_MS, clockTime, zoneClock, type LocalDay } from './zone-clock';

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

const MINUTE = 60_000;
const DAY_MINUTES = 24 * 60;
const minutesOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));

/**
 * The wall-clock instant of `date` at `minutes` past midnight in `zone`, or null when that
 * local time does not exist (the hour skipped when clocks go forward). When it exists twice
 * (clocks go back), the first is taken.
 */
export function wallClock(date: string, minutes: number, zone: string): DateTime | null {
  const time = clockTime(minutes);
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

/** Per schedule and changing day, its slots (instants), computed once with the full tz rules. */
const changingDays = new Map<string, Array<[number, number]>>();
const MAX_CHANGING_DAYS = 10_000;

/** The wall-clock start (minutes past midnight) of each slot the intervals are cut into. */
function eachStart(schedule: Schedule, intervals: AvailabilityRule['intervals'], visit: (start: number) => void) {
  const { durationMinutes, bufferMinutes } = schedule;
  for (const interval of intervals) {
    const end = minutesOf(interval.end_time);
    for (let start = minutesOf(interval.start_time); start + durationMinutes <= end; start += durationMinutes + bufferMinutes) visit(start);
  }
}

/**
 * Calls `visit` with the start and end (ms) of each slot a local day makes. An ordinary day is
 * plain arithmetic: wall-clock minute m is its local midnight plus m minutes. A day whose offset
 * changes goes through luxon (`wallClock`): a start that does not exist that day (clocks
 * forward) is skipped, one that exists twice (clocks back) is its first occurrence. That day's
 * answer depends only on the schedule, the zone and the date, so it is kept under those (a
 * changed schedule is another key; tz data does not change while the process runs).
 */
function eachSlotOfDay(schedule: Schedule, rule: AvailabilityRule | undefined, day: LocalDay, visit: (start: number, end: number) => void) {
  const { timezone, durationMinutes, bufferMinutes } = schedule;
  const length = durationMinutes * MINUTE;
  const intervals = (rule?.intervals ?? []).filter((interval) => interval.enabled);
  if (intervals.length === 0) return;
  const midnight = day.startMs;
  if (midnight !== null)
    return eachStart(schedule, intervals, (start) => visit(midnight + start * MINUTE, midnight + start * MINUTE + length));
  const key = JSON.stringify([timezone, day.date, durationMinutes, bufferMinutes, intervals]);
  let slots = changingDays.get(key);
  if (!slots) {
    const found: Array<[number, number]> = [];
    eachStart(schedule, intervals, (start) => {
      const at = wallClock(day.date, start, timezone)?.toMillis();
      if (at !== undefined) found.push([at, at + length]);
    });
    if (changingDays.size >= MAX_CHANGING_DAYS) changingDays.clear();
    changingDays.set(key, found);
    slots = found;
  }
  for (const [start, end] of slots) visit(start, end);
}

/**
 * Slots starting in [from, to), day by local day (see `eachSlotOfDay`), while `more()` says so:
 * days come in order and a slot starts on its own day, so stopping after a day loses no earlier
 * slot.
 */
function eachSlotBetween(schedule: Schedule, from: Date, to: Date, visit: (start: number, end: number) => void, more: () => boolean) {
  const clock = zoneClock(schedule.timezone);
  const byDay = new Map(schedule.rules.map((rule) => [rule.weekday, rule]));
  const fromMs = from.getTime();
  const toMs = to.getTime();
  if (!(fromMs < toMs)) return;
  // A day before and after: a local day reaches up to 14 hours past either side of a UTC one.
  const first = clock.wallOf(fromMs).date;
  const days = Math.round((Date.parse(clock.wallOf(toMs).date) - Date.parse(first)) / DAY_MS);
  for (let i = -1; i <= days + 1 && more(); i += 1) {
    const day = clock.localDay(first, i);
    eachSlotOfDay(schedule, byDay.get(WEEKDAYS[day.weekdayIndex]!), day, (start, end) => {
      if (start >= fromMs && start < toMs) visit(start, end);
    });
  }
}

/**
 * Slots starting in [from, to): for each local day, each enabled interval of its weekday is cut
 * into `duration` minutes with `buffer` minutes between, by the wall clock — a 09:00 slot is
 * at 09:00 local on both sides of a daylight-saving change, and a slot whose start does not
 * exist that day is skipped. A slot must end within its interval. With a `limit`, the earliest
 * `limit` slots, and no day is cut past the one that reached it.
 */
export function slotsBetween(schedule: Schedule, from: Date, to: Date, limit = Number.POSITIVE_INFINITY): Slot[] {
  const found: Array<[number, number]> = [];
  eachSlotBetween(
    schedule,
    from,
    to,
    (start, end) => found.push([start, end]),
    () => found.length < limit,
  );
  return found
    .sort((a, b) => a[0] - b[0])
    .slice(0, limit)
    .map(([start, end]) => ({ startsAt: new Date(start), endsAt: new Date(end) }));
}

/** How many slots `slotsBetween` would list, without listing them. */
export function countSlotsBetween(schedule: Schedule, from: Date, to: Date): number {
  const { durationMinutes, ...base } = schedule;
  return countSlotsByDuration(base, [durationMinutes], from, to).get(durationMinutes) ?? 0;
}

/**
 * How many slots `slotsBetween` would list in [from, to) for each of some durations on the same
 * intervals, zone and buffer — without listing them. The cost does not grow with the slots: on an
 * ordinary day (one offset from midnight to midnight) an interval's starts are
 * `midnight + start + k × (duration + buffer)`, so the ones in the window are counted by
 * arithmetic (a whole day inside the window: the same figure for every such day of that weekday);
 * only a day whose offset changes is walked slot by slot (`eachSlotOfDay`, cached). So the work is
 * about (days × durations × intervals), whatever the slot length.
 */
export function countSlotsByDuration(
  base: Omit<Schedule, 'durationMinutes'>,
  durations: readonly number[],
  from: Date,
  to: Date,
): Map<number, number> {
  const counts = new Map(durations.map((duration) => [duration, 0]));
  const fromMs = from.getTime();
  const toMs = to.getTime();
  if (!(fromMs < toMs) || durations.length === 0) return counts;
  const clock = zoneClock(base.timezone);
  const byDay = new Map(base.rules.map((rule) => [rule.weekday, rule]));
  const first = clock.wallOf(fromMs).date;
  const days = Math.round((Date.parse(clock.wallOf(toMs).date) - Date.parse(first)) / DAY_MS);
  const unique = [...counts.keys()];
  // Per weekday and duration: the slots of a whole ordinary day.
  const wholeDay = new Map<string, number>();
  for (let i = -1; i <= days + 1; i += 1) {
    const day = clock.localDay(first, i);
    const weekday = WEEKDAYS[day.weekdayIndex]!;
    const rule = byDay.get(weekday);
    const intervals = (rule?.intervals ?? []).filter((interval) => interval.enabled);
    if (intervals.length === 0) continue;
    const midnight = day.startMs;
    for (const duration of unique) {
      let found = 0;
      if (midnight === null) {
        eachSlotOfDay({ ...base, durationMinutes: duration }, rule, day, (start) => {
          if (start >= fromMs && start < toMs) found += 1;
        });
      } else if (midnight >= fromMs && midnight + DAY_MS <= toMs) {
        const key = `${weekday}|${duration}`;
        let whole = wholeDay.get(key);
        if (whole === undefined) {
          whole = startsWithin(intervals, duration, base.bufferMinutes, midnight, Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY);
          wholeDay.set(key, whole);
        }
        found = whole;
      } else {
        found = startsWithin(intervals, duration, base.bufferMinutes, midnight, fromMs, toMs);
      }
      counts.set(duration, counts.get(duration)! + found);
    }
  }
  return counts;
}

/** On an ordinary day starting at `midnight`: the slots of the intervals that start in [fromMs, toMs). */
function startsWithin(
  intervals: AvailabilityRule['intervals'],
  duration: number,
  buffer: number,
  midnight: number,
  fromMs: number,
  toMs: number,
): number {
  const step = (duration + buffer) * MINUTE;
  let count = 0;
  for (const interval of intervals) {
    const start = minutesOf(interval.start_time);
    const end = minutesOf(interval.end_time);
    if (end - start < duration) continue;
    // Starts k = 0..n-1 (a slot ends within its interval); those in the window are lo..hi.
    const n = Math.floor((end - start - duration) / (duration + buffer)) + 1;
    const first = midnight + start * MINUTE;
    const lo = Math.max(0, Math.ceil((fromMs - first) / step));
    const hi = Math.min(n - 1, Math.ceil((toMs - first) / step) - 1);
    if (hi >= lo) count += hi - lo + 1;
  }
  return count;
}

/** How a slot reads in a time zone: `date` YYYY-MM-DD, `startTime`/`endTime` HH:MM. */
export function localSlot(slot: Slot, zone: string) {
  const clock = zoneClock(zone);
  const start = clock.wallOf(slot.startsAt.getTime());
  return { date: start.date, startTime: start.time, endTime: clock.wallOf(slot.endsAt.getTime()).time };
}

/**
 * The slot a booking names (its date and times read in `zone`), if the schedule makes it. On
 * every booking, so it does not list a day's slots: when the booking is read in the schedule's
 * own zone, a slot of that wall-clock time exists iff an enabled interval of that weekday cuts
 * one there (`slotsBetween`'s rule, for one start); otherwise the slots around it are listed.
 */
export function findSlot(schedule: Schedule, zone: string, date: string, startTime: string, endTime: string): Slot | null {
  const start = minutesOf(startTime);
  if (zone === schedule.timezone && start < DAY_MINUTES && clockTime(start) === startTime) {
    // An ordinary day (one offset all day): its wall-clock minute m is its midnight plus m minutes,
    // no tz rules needed (`LocalDay.startMs`). A day whose offset changes goes through luxon below.
    const day = zoneClock(zone).localDay(date);
    if (day.date === date && day.startMs !== null) {
      const startsAt = day.startMs + start * MINUTE;
      const slot = cutsAt(schedule, WEEKDAYS[day.weekdayIndex]!, start)
        ? { startsAt: new Date(startsAt), endsAt: new Date(startsAt + schedule.durationMinutes * MINUTE) }
        : null;
      if (!slot || localSlot(slot, zone).endTime !== endTime) return null;
      return slot;
    }
  }
  const local = wallClock(date, start, zone);
  if (!local) return null;
  const slot = zone === schedule.timezone ? slotStartingAt(schedule, local, start) : slotsAround(schedule, local.toJSDate());
  if (!slot || localSlot(slot, zone).endTime !== endTime) return null;
  return slot;
}

function slotStartingAt(schedule: Schedule, local: DateTime, start: number): Slot | null {
  const cut = cutsAt(schedule, WEEKDAYS[local.weekday - 1]!, start);
  return cut ? { startsAt: local.toJSDate(), endsAt: local.plus({ minutes: schedule.durationMinutes }).toJSDate() } : null;
}

/** Whether an enabled interval of the weekday cuts a slot at wall-clock minute `start` (slotsBetween's rule, for one start). */
function cutsAt(schedule: Schedule, weekday: (typeof WEEKDAYS)[number], start: number): boolean {
  const { durationMinutes, bufferMinutes } = schedule;
  // As in slotsBetween: the last rule of a weekday is the one that counts.
  const rule = schedule.rules.filter((candidate) => candidate.weekday === weekday).at(-1);
  return (rule?.intervals ?? []).some((interval) => {
    const from = minutesOf(interval.start_time);
    return (
      interval.enabled &&
      start >= from &&
      (start - from) % (durationMinutes + bufferMinutes) === 0 &&
      start + durationMinutes <= minutesOf(interval.end_time)
    );
  });
}

function slotsAround(schedule: Schedule, startsAt: Date): Slot | null {
  const found = slotsBetween(schedule, startsAt, new Date(startsAt.getTime() + 1));
  return found.find((candidate) => candidate.startsAt.getTime() === startsAt.getTime()) ?? null;
}

/**
 * Midnight to midnight of local dates `from`..`to` (inclusive) in `zone`: from the start of
 * `from` to the start of the day after `to` — by arithmetic on ordinary days, through luxon when
 * clocks change that day (midnight may not exist then: America/Santiago's spring day starts at
 * 01:00, and the day after it at 00:00 again, not 24 wall-clock hours after its start).
 */
export function localDateRange(from: string, to: string, zone: string): { start: Date; end: Date } {
  const clock = zoneClock(zone);
  const midnight = (date: string, days: number) =>
    clock.localDay(date, days).startMs ?? DateTime.fromISO(date, { zone }).plus({ days }).startOf('day').toMillis();
  return { start: new Date(midnight(from, 0)), end: new Date(midnight(to, 1)) };
}
