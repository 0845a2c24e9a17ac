import { counterKey, limitReached, limitStats, periodOf } from '../../src/domain/limits';

/** The request limits (README: calendar windows in UTC; a refusal says when to retry), without a database. */
describe('request limits', () => {
  test.each([
    ['2031-08-31T23:59:00Z', '2031-09-01T00:00:00Z', '60'],
    ['2031-08-31T23:59:59.500Z', '2031-09-01T00:00:00Z', '1'], // never less than a second
    ['2031-08-31T10:00:00Z', '2031-09-01T00:00:00Z', '50400'],
  ])('refused at %s in a window ending %s: 429, Retry-After %s', (now, endsAt, retryAfter) => {
    const refusal = limitReached('weekly', 2, new Date(endsAt), new Date(now));
    expect(refusal).toMatchObject({ status: 429, headers: { 'Retry-After': retryAfter } });
    expect(refusal.message).toBe('The weekly limit of 2 requests is reached');
  });

  test.each([
    [
      { daily: 0, weekly: 0, monthly: 0 },
      { daily: 10, weekly: 10, monthly: 10 },
    ],
    [
      { daily: 3, weekly: 9, monthly: 12 },
      { daily: 7, weekly: 1, monthly: 0 },
    ], // never below 0
  ])('counts %p against 10 each → remaining %p', (counts, remaining) => {
    const stats = limitStats(counts, { daily: 10, weekly: 10, monthly: 10 });
    for (const window of ['daily', 'weekly', 'monthly'] as const)
      expect(stats[window]).toEqual({ count: counts[window], limit: 10, remaining: remaining[window] });
  });

  test('one counter per user, window and period', () => {
    expect(counterKey('u1', 'daily', '2026-11-21')).toBe('u1:daily:2026-11-21');
  });

  // Saturday 2026-11-21 23:59:30 UTC: the day ends at midnight, the ISO week on Monday, the month on the 1st.
  test.each([
    ['daily', 'u1:daily:2026-11-21', '2026-11-22T00:00:00.000Z'],
    ['weekly', 'u1:weekly:W2026-11-16', '2026-11-23T00:00:00.000Z'],
    ['monthly', 'u1:monthly:2026-11', '2026-12-01T00:00:00.000Z'],
  ] as const)('the %s counter of a moment is its UTC calendar period', (window, key, endsAt) => {
    const period = periodOf('u1', window, new Date('2026-11-21T23:59:30Z'));
    expect({ key: period.key, endsAt: period.endsAt.toISOString() }).toEqual({ key, endsAt });
  });
});
