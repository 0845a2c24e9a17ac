import { analyticsOf, totalsOf } from '../src/domain/totals';

const at = new Date('2030-01-01T00:00:00Z');

describe('totals from booking facts', () => {
  test('confirmed count; cancelled ones keep what was not refunded; unconfirmed ones wait', () => {
    expect(
      totalsOf([
        { totalMinor: 500, refundMinor: null, confirmedAt: at, cancelledAt: null },
        { totalMinor: 300, refundMinor: 200, confirmedAt: at, cancelledAt: at },
        { totalMinor: null, refundMinor: 50, confirmedAt: null, cancelledAt: at },
      ]),
    ).toEqual({ totalBookings: 1, totalSpentMinor: 600, lifetimeValueMinor: 600, lastBooking: at });
  });
  test('a refund larger than the booking never makes spending negative', () => {
    expect(totalsOf([{ totalMinor: 100, refundMinor: 900, confirmedAt: at, cancelledAt: at }]).totalSpentMinor).toBe(0);
  });
  test('analytics of nobody are zeros, not NaN', () => {
    expect(analyticsOf([])).toEqual({
      totalCustomers: 0,
      activeCustomers: 0,
      followers: 0,
      totalRevenue: 0,
      averageOrderValue: 0,
      customerRetentionRate: 0,
    });
  });
});
