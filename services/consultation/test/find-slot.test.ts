import { DateTime } from 'luxon';
import { WEEKDAYS } from '@mkt/contracts';
import { countSlotsBetween, findSlot, localSlot, slotsBetween, type Schedule } from '../src/domain/slots';

/**
 * findSlot decides one start directly; slotsBetween lists a day. For every start a day could
 * name (every 5 minutes), including the days clocks change, both must agree.
 */
const zones = ['America/New_York', 'Europe/Berlin', 'Africa/Addis_Ababa', 'Australia/Lord_Howe'];
// Clock-change days of the zones above (Sundays), a Wednesday and a Thursday (whose 09:00 interval is off).
const dates = ['2026-03-08', '2026-03-29', '2026-04-05', '2026-06-10', '2026-06-11', '2026-10-04', '2026-10-25', '2026-11-01'];

function scheduleIn(timezone: string, durationMinutes: number, bufferMinutes: number): Schedule {
  return {
    timezone,
    durationMinutes,
    bufferMinutes,
    rules: WEEKDAYS.map((weekday, i) => ({
      type: 'weekly' as const,
      weekday,
      intervals: [
        { start_time: '00:30:00', end_time: '03:40:00', enabled: true },
        { start_time: '09:00:00', end_time: '12:00:00', enabled: i % 2 === 0 },
        { start_time: '13:15:00', end_time: '18:00:00', enabled: true },
      ],
    })),
  };
}

const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

describe('findSlot agrees with the slots a day lists', () => {
  test.each(zones)('in %s, for every 5-minute start of days with and without a clock change', (zone) => {
    for (const [duration, buffer] of [
      [30, 0],
      [50, 10],
      [45, 5],
    ] as const) {
      const schedule = scheduleIn(zone, duration, buffer);
      for (const date of dates) {
        const day = DateTime.fromISO(date, { zone });
        const listed = new Map(
          slotsBetween(schedule, day.startOf('day').toJSDate(), day.endOf('day').toJSDate())
            .map((slot) => [localSlot(slot, zone), slot] as const)
            .filter(([local]) => local.date === date)
            .map(([local, slot]) => [`${local.startTime}-${local.endTime}`, slot.startsAt.toISOString()]),
        );
        let found = 0;
        for (let start = 0; start < 24 * 60; start += 5) {
          const startTime = hhmm(start);
          const endTime = DateTime.fromISO(`${date}T${startTime}`, { zone }).plus({ minutes: duration }).toFormat('HH:mm');
          const slot = findSlot(schedule, zone, date, startTime, endTime);
          const expected = listed.get(`${startTime}-${endTime}`) ?? null;
          expect([date, startTime, slot?.startsAt.toISOString() ?? null]).toEqual([date, startTime, expected]);
          if (slot) found += 1;
        }
        expect(found).toBeGreaterThan(0);
      }
    }
  });

  test('a booking read in another zone than the schedule’s still finds the same instant', () => {
    const schedule = scheduleIn('Europe/Berlin', 30, 0);
    // 13:15 in Berlin on 10 June is 14:15 in Addis Ababa.
    expect(findSlot(schedule, 'Africa/Addis_Ababa', '2026-06-10', '14:15', '14:45')?.startsAt.toISOString()).toBe(
      '2026-06-10T11:15:00.000Z',
    );
    expect(findSlot(schedule, 'Africa/Addis_Ababa', '2026-06-10', '14:20', '14:50')).toBeNull();
  });
});

describe('countSlotsBetween agrees with the length of slotsBetween', () => {
  test.each(zones)('in %s, over windows that start and end mid-day, across clock changes', (zone) => {
    for (const [duration, buffer] of [
      [5, 0],
      [50, 10],
    ] as const) {
      const schedule = scheduleIn(zone, duration, buffer);
      for (const [from, to] of [
        ['2026-03-01T07:13:00Z', '2026-04-12T19:02:00Z'],
        ['2026-10-20T23:59:00Z', '2026-11-03T00:01:00Z'],
        ['2026-06-10T10:00:00Z', '2026-06-10T16:00:00Z'],
        ['2026-06-10T10:00:00Z', '2026-06-10T10:00:00Z'],
      ] as const) {
        const window = [new Date(from), new Date(to)] as const;
        expect([from, countSlotsBetween(schedule, ...window)]).toEqual([from, slotsBetween(schedule, ...window).length]);
      }
    }
  });
});
