import type { AvailabilityRule } from '@mkt/contracts';
import { findSlot, localSlot, slotsBetween, type Schedule } from '../src/domain/slots';

const everyDay = (intervals: Array<[string, string]>): AvailabilityRule[] =>
  (['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const).map((weekday) => ({
    type: 'weekly',
    weekday,
    intervals: intervals.map(([start_time, end_time]) => ({ start_time, end_time, enabled: true })),
  }));

const ny = (rules: AvailabilityRule[], durationMinutes = 60, bufferMinutes = 0): Schedule => ({
  timezone: 'America/New_York',
  rules,
  durationMinutes,
  bufferMinutes,
});
const local = (slots: ReturnType<typeof slotsBetween>, zone = 'America/New_York') => slots.map((slot) => localSlot(slot, zone));

describe('slot arithmetic', () => {
  test('cuts intervals by duration and buffer, and a slot must end inside its interval', () => {
    const schedule = ny(everyDay([['09:00:00', '12:00:00']]), 50, 10);
    const slots = slotsBetween(schedule, new Date('2026-06-10T04:00:00Z'), new Date('2026-06-11T04:00:00Z'));
    expect(local(slots)).toEqual([
      { date: '2026-06-10', startTime: '09:00', endTime: '09:50' },
      { date: '2026-06-10', startTime: '10:00', endTime: '10:50' },
      { date: '2026-06-10', startTime: '11:00', endTime: '11:50' },
    ]);
    const tight = slotsBetween(
      ny(everyDay([['09:00:00', '10:30:00']]), 60, 0),
      new Date('2026-06-10T04:00:00Z'),
      new Date('2026-06-11T04:00:00Z'),
    );
    expect(tight).toHaveLength(1);
  });

  test('only the intervals of the weekday, and disabled intervals give nothing', () => {
    const rules: AvailabilityRule[] = [
      { type: 'weekly', weekday: 'monday', intervals: [{ start_time: '09:00:00', end_time: '10:00:00', enabled: true }] },
      { type: 'weekly', weekday: 'tuesday', intervals: [{ start_time: '09:00:00', end_time: '10:00:00', enabled: false }] },
    ];
    const week = slotsBetween(ny(rules), new Date('2026-06-07T00:00:00Z'), new Date('2026-06-14T00:00:00Z'));
    expect(local(week)).toEqual([{ date: '2026-06-08', startTime: '09:00', endTime: '10:00' }]);
  });

  test('across the March change (America/New_York, 2026-03-08) slots stay at their wall-clock times', () => {
    const schedule = ny(everyDay([['09:00:00', '11:00:00']]));
    const slots = slotsBetween(schedule, new Date('2026-03-07T00:00:00Z'), new Date('2026-03-10T00:00:00Z'));
    expect(local(slots).map((s) => `${s.date} ${s.startTime}`)).toEqual([
      '2026-03-07 09:00',
      '2026-03-07 10:00',
      '2026-03-08 09:00',
      '2026-03-08 10:00',
      '2026-03-09 09:00',
      '2026-03-09 10:00',
    ]);
    expect(slots[0]!.startsAt.toISOString()).toBe('2026-03-07T14:00:00.000Z'); // EST, UTC-5
    expect(slots[2]!.startsAt.toISOString()).toBe('2026-03-08T13:00:00.000Z'); // EDT, UTC-4
  });

  test('a slot in the skipped hour does not exist; one across it lasts its real duration', () => {
    const schedule = ny(everyDay([['01:00:00', '04:00:00']]));
    const slots = slotsBetween(schedule, new Date('2026-03-08T05:00:00Z'), new Date('2026-03-08T12:00:00Z'));
    expect(local(slots).map((s) => s.startTime)).toEqual(['01:00', '03:00']);
    expect(local(slots)[0]).toEqual({ date: '2026-03-08', startTime: '01:00', endTime: '03:00' });
    expect(slots[0]!.endsAt.getTime() - slots[0]!.startsAt.getTime()).toBe(3_600_000);
  });

  test('across the November change (2026-11-01) the repeated hour gives one slot at its first occurrence', () => {
    const schedule = ny(everyDay([['00:00:00', '03:00:00']]));
    const slots = slotsBetween(schedule, new Date('2026-11-01T04:00:00Z'), new Date('2026-11-01T09:00:00Z'));
    expect(local(slots).map((s) => s.startTime)).toEqual(['00:00', '01:00', '02:00']);
    expect(slots[1]!.startsAt.toISOString()).toBe('2026-11-01T05:00:00.000Z'); // 01:00 EDT
    expect(slots[2]!.startsAt.toISOString()).toBe('2026-11-01T07:00:00.000Z'); // 02:00 EST
    const workday = slotsBetween(
      ny(everyDay([['09:00:00', '10:00:00']])),
      new Date('2026-10-31T00:00:00Z'),
      new Date('2026-11-03T00:00:00Z'),
    );
    expect(workday.map((s) => s.startsAt.toISOString())).toEqual([
      '2026-10-31T13:00:00.000Z',
      '2026-11-01T14:00:00.000Z',
      '2026-11-02T14:00:00.000Z',
    ]);
  });

  test('a booking names a slot by local date and times; anything else is not one', () => {
    const schedule = ny(everyDay([['09:00:00', '12:00:00']]), 50, 10);
    expect(findSlot(schedule, 'America/New_York', '2026-06-10', '10:00', '10:50')?.startsAt.toISOString()).toBe('2026-06-10T14:00:00.000Z');
    expect(findSlot(schedule, 'America/New_York', '2026-06-10', '10:30', '11:20')).toBeNull();
    expect(findSlot(schedule, 'America/New_York', '2026-06-10', '10:00', '11:00')).toBeNull();
    expect(findSlot(schedule, 'America/New_York', '2026-06-10', '13:00', '13:50')).toBeNull();
    // The same instant read in another zone (the consultation's) is the same slot.
    expect(findSlot(schedule, 'Africa/Addis_Ababa', '2026-06-10', '17:00', '17:50')?.startsAt.toISOString()).toBe(
      '2026-06-10T14:00:00.000Z',
    );
  });
});
