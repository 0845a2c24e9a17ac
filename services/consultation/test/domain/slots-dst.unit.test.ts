import { DateTime } from 'luxon';
import { WEEKDAYS, type AvailabilityRule } from '@mkt/contracts';
import {
  countSlotsBetween,
  countSlotsByDuration,
  localDateRange,
  localSlot,
  slotsBetween,
  wallClock,
  type Schedule,
  type Slot,
} from '../../src/domain/slots';
import { zoneClock } from '../../src/domain/zone-clock';

/**
 * slotsBetween computes ordinary days by arithmetic and only days whose offset changes through
 * luxon. The luxon way below — every start through `wallClock`, every day through luxon's own
 * calendar — is what it replaced; both must give the same instants and the same wall-clock
 * readings, on the changes of both hemispheres and of zones with odd offsets.
 */
function slotsTheLuxonWay(schedule: Schedule, from: Date, to: Date): Slot[] {
  const { timezone, durationMinutes, bufferMinutes } = schedule;
  const byDay = new Map(schedule.rules.map((rule) => [rule.weekday, rule]));
  const minutesOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
  const slots: Slot[] = [];
  let day = DateTime.fromJSDate(from, { zone: timezone }).startOf('day').minus({ days: 1 });
  const lastDay = DateTime.fromJSDate(to, { zone: timezone }).startOf('day').plus({ days: 1 });
  while (day <= lastDay) {
    const rule = byDay.get(WEEKDAYS[day.weekday - 1]!);
    for (const interval of rule?.intervals ?? []) {
      if (!interval.enabled) continue;
      const end = minutesOf(interval.end_time);
      for (let start = minutesOf(interval.start_time); start + durationMinutes <= end; start += durationMinutes + bufferMinutes) {
        const local = wallClock(day.toFormat('yyyy-MM-dd'), start, timezone);
        if (!local) continue;
        const startsAt = local.toJSDate();
        if (startsAt >= from && startsAt < to) slots.push({ startsAt, endsAt: local.plus({ minutes: durationMinutes }).toJSDate() });
      }
    }
    day = day.plus({ days: 1 });
  }
  return slots.sort((a, b) => a.startsAt.getTime() - b.startsAt.getTime());
}

/** Every day the same intervals: the small hours (where clocks change) and a working day. */
function allWeek(timezone: string, durationMinutes: number, bufferMinutes: number, intervals: Array<[string, string]>): Schedule {
  const rules: AvailabilityRule[] = WEEKDAYS.map((weekday) => ({
    type: 'weekly',
    weekday,
    intervals: intervals.map(([start_time, end_time]) => ({ start_time, end_time, enabled: true })),
  }));
  return { timezone, durationMinutes, bufferMinutes, rules };
}

const readable = (slots: Slot[], zone: string) =>
  slots.map((slot) => ({ ...localSlot(slot, zone), startsAt: slot.startsAt.toISOString(), endsAt: slot.endsAt.toISOString() }));
/** The same readings through luxon's DateTime (what localSlot did before). */
const readableTheLuxonWay = (slots: Slot[], zone: string) =>
  slots.map((slot) => {
    const start = DateTime.fromJSDate(slot.startsAt, { zone });
    const end = DateTime.fromJSDate(slot.endsAt, { zone });
    return {
      date: start.toFormat('yyyy-MM-dd'),
      startTime: start.toFormat('HH:mm'),
      endTime: end.toFormat('HH:mm'),
      startsAt: slot.startsAt.toISOString(),
      endsAt: slot.endsAt.toISOString(),
    };
  });

// [zone, a window around one of its changes]; the windows start and end mid-day, local.
const CHANGES: Array<[string, string, string]> = [
  ['America/New_York', '2026-03-06T17:13:00Z', '2026-03-10T09:02:00Z'], // spring forward, 02:00 → 03:00
  ['America/New_York', '2026-10-30T17:13:00Z', '2026-11-03T09:02:00Z'], // fall back, 02:00 → 01:00
  ['Australia/Sydney', '2026-04-03T05:00:00Z', '2026-04-07T05:00:00Z'], // back (southern autumn), 03:00 → 02:00
  ['Australia/Sydney', '2026-10-02T05:00:00Z', '2026-10-06T05:00:00Z'], // forward (southern spring), 02:00 → 03:00
  ['America/Santiago', '2026-04-03T12:00:00Z', '2026-04-07T12:00:00Z'], // back at midnight: 24:00 → 23:00
  ['America/Santiago', '2026-09-04T12:00:00Z', '2026-09-08T12:00:00Z'], // forward at midnight: 00:00 does not exist
  ['Australia/Lord_Howe', '2026-04-03T05:00:00Z', '2026-04-07T05:00:00Z'], // half an hour back
  ['Australia/Lord_Howe', '2026-10-02T05:00:00Z', '2026-10-06T05:00:00Z'], // half an hour forward
  ['Asia/Kathmandu', '2026-06-01T00:00:00Z', '2026-06-05T00:00:00Z'], // +05:45, no change
  ['Africa/Addis_Ababa', '2026-06-01T00:00:00Z', '2026-06-05T00:00:00Z'], // +03:00, no change
];
const SHAPES: Array<[number, number, Array<[string, string]>]> = [
  [5, 0, [['00:00:00', '23:59:00']]],
  [
    30,
    0,
    [
      ['00:30:00', '03:40:00'],
      ['09:00:00', '12:00:00'],
    ],
  ],
  [
    50,
    10,
    [
      ['01:15:00', '04:00:00'],
      ['22:00:00', '23:59:59'],
    ],
  ],
  [
    45,
    5,
    [
      ['23:00:00', '23:59:59'],
      ['00:00:00', '02:30:00'],
    ],
  ],
];

describe('slots by arithmetic on ordinary days agree with the luxon way', () => {
  test.each(CHANGES)('%s, %s .. %s', (zone, from, to) => {
    const window = [new Date(from), new Date(to)] as const;
    for (const [duration, buffer, intervals] of SHAPES) {
      const schedule = allWeek(zone, duration, buffer, intervals);
      const expected = slotsTheLuxonWay(schedule, ...window);
      expect(expected.length).toBeGreaterThan(0);
      // Twice: the second answer of a changing day comes from what the first kept.
      for (let round = 0; round < 2; round += 1) {
        const slots = slotsBetween(schedule, ...window);
        expect(readable(slots, zone)).toEqual(readableTheLuxonWay(expected, zone));
        expect(countSlotsBetween(schedule, ...window)).toBe(expected.length);
      }
      // Read in another zone than the schedule's (the consultation's own may differ).
      expect(readable(slotsBetween(schedule, ...window), 'Europe/London')).toEqual(readableTheLuxonWay(expected, 'Europe/London'));
    }
  });

  test('the New York changes keep the rules of the README: a skipped start is skipped, a repeated one is its first occurrence', () => {
    const schedule = allWeek('America/New_York', 30, 0, [['00:00:00', '04:00:00']]);
    const spring = readable(slotsBetween(schedule, new Date('2026-03-08T05:00:00Z'), new Date('2026-03-08T10:00:00Z')), 'America/New_York');
    expect(spring.map((s) => s.startTime)).toEqual(['00:00', '00:30', '01:00', '01:30', '03:00', '03:30']);
    // The 01:30 slot ends at 03:00 local: half an hour later, by the clock that jumped.
    expect(spring[3]).toMatchObject({ startTime: '01:30', endTime: '03:00', startsAt: '2026-03-08T06:30:00.000Z' });
    const autumn = readable(slotsBetween(schedule, new Date('2026-11-01T04:00:00Z'), new Date('2026-11-01T10:00:00Z')), 'America/New_York');
    expect(autumn.map((s) => s.startTime)).toEqual(['00:00', '00:30', '01:00', '01:30', '02:00', '02:30', '03:00', '03:30']);
    expect(autumn[2]).toMatchObject({ startTime: '01:00', startsAt: '2026-11-01T05:00:00.000Z' }); // 01:00 EDT, the first
    expect(autumn[4]).toMatchObject({ startTime: '02:00', startsAt: '2026-11-01T07:00:00.000Z' }); // 02:00 EST
  });

  test('with a limit, the earliest slots, as without one', () => {
    const schedule = allWeek('America/New_York', 5, 0, [['00:00:00', '23:59:00']]);
    const window = [new Date('2026-03-01T05:00:00Z'), new Date('2026-04-01T04:00:00Z')] as const;
    const all = slotsBetween(schedule, ...window);
    expect(all).toHaveLength(31 * 287 - 12);
    expect(slotsBetween(schedule, ...window, 501)).toEqual(all.slice(0, 501));
  });
});

describe('the zone clock', () => {
  test('a range of local dates runs from the first one’s start to the start of the day after the last, as luxon says (not the last one’s start plus a day of wall clock)', () => {
    const cases: Array<[string, string, string]> = [
      ['America/New_York', '2026-03-08', '2026-03-08'],
      ['America/New_York', '2026-10-31', '2026-11-01'],
      ['America/Santiago', '2026-09-06', '2026-09-06'], // midnight does not exist: the day starts at 01:00
      ['America/Santiago', '2026-04-04', '2026-04-05'],
      ['Australia/Sydney', '2026-04-05', '2026-10-04'],
      ['Africa/Addis_Ababa', '2026-06-01', '2026-07-01'],
    ];
    for (const [zone, from, to] of cases) {
      const range = localDateRange(from, to, zone);
      const start = DateTime.fromISO(from, { zone }).startOf('day');
      const end = DateTime.fromISO(to, { zone }).plus({ days: 1 }).startOf('day');
      expect([zone, from, range.start.getTime(), range.end.getTime()]).toEqual([zone, from, start.toMillis(), end.toMillis()]);
    }
  });

  test('reads instants as luxon does, every 30 minutes through the changes of a year', () => {
    for (const zone of ['America/New_York', 'Australia/Sydney', 'America/Santiago', 'Australia/Lord_Howe', 'Asia/Kathmandu']) {
      const clock = zoneClock(zone);
      for (let ms = Date.parse('2026-01-01T00:00:00Z'); ms < Date.parse('2027-01-01T00:00:00Z'); ms += 30 * 60_000) {
        const luxon = DateTime.fromMillis(ms, { zone });
        expect([zone, ms, clock.wallOf(ms)]).toEqual([zone, ms, { date: luxon.toFormat('yyyy-MM-dd'), time: luxon.toFormat('HH:mm') }]);
      }
    }
  });

  test('a day is ordinary (plain arithmetic) only when its offset is the same at its start and end', () => {
    const ny = zoneClock('America/New_York');
    expect(ny.localDay('2026-03-07').startMs).toBe(Date.parse('2026-03-07T05:00:00Z'));
    expect(ny.localDay('2026-03-08').startMs).toBeNull();
    expect(ny.localDay('2026-03-09').startMs).toBe(Date.parse('2026-03-09T04:00:00Z'));
    expect(ny.localDay('2026-11-01').startMs).toBeNull();
    expect(ny.localDay('2026-10-31', 2)).toEqual({ date: '2026-11-02', weekdayIndex: 0, startMs: Date.parse('2026-11-02T05:00:00Z') });
  });
});

describe('slots counted for many durations at once agree with listing them', () => {
  // 28 days from a mid-day instant (the rule-set listing's window), across each change.
  test.each(CHANGES)('%s, 28 days from %s', (zone, from) => {
    const window = [new Date(from), new Date(Date.parse(from) + 28 * 86_400_000)] as const;
    for (const [, buffer, intervals] of SHAPES) {
      const { durationMinutes: _, ...base } = allWeek(zone, 5, buffer, intervals);
      const durations = [5, 15, 25, 45, 60, 90, 480];
      const counts = countSlotsByDuration(base, durations, ...window);
      for (const duration of durations)
        expect([duration, counts.get(duration)]).toEqual([
          duration,
          slotsBetween({ ...base, durationMinutes: duration }, ...window).length,
        ]);
    }
  });
});
