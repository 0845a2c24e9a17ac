/** What the totals of a relationship follow from: the facts of its bookings. */
export interface Fact {
  totalMinor: number | null;
  refundMinor: number | null;
  refundedMinor?: number | null;
  confirmedAt: Date | null;
  cancelledAt: Date | null;
}

export interface Totals {
  totalBookings: number;
  totalSpentMinor: number;
  lifetimeValueMinor: number;
  lastBooking: Date | null;
}

/**
 * A booking counts once it is confirmed (for a paid booking: once the wallet holds its total)
 * and until it is cancelled; what it paid counts, less the refund of a cancellation — the
 * amount the wallet reports refunded once it has, the amount asked until then — never below
 * zero. A cancel that arrived before its confirm waits in the facts and is applied when the
 * confirm comes.
 */
export function totalsOf(facts: Fact[]): Totals {
  let totalBookings = 0;
  let spent = 0;
  let lastBooking: Date | null = null;
  for (const fact of facts) {
    // Fields an event has not brought yet may be absent, not null.
    if (!fact.confirmedAt || typeof fact.totalMinor !== 'number') continue;
    if (!fact.cancelledAt) totalBookings += 1;
    const refund = fact.refundedMinor ?? fact.refundMinor ?? 0;
    spent += Math.max(0, fact.totalMinor - (fact.cancelledAt ? refund : 0));
    if (!lastBooking || fact.confirmedAt > lastBooking) lastBooking = fact.confirmedAt;
  }
  return { totalBookings, totalSpentMinor: spent, lifetimeValueMinor: spent, lastBooking };
}

/** Whether two totals are the same (the projection's read-after-write check). */
export function sameTotals(a: Totals, b: Totals): boolean {
  return (
    a.totalBookings === b.totalBookings &&
    a.totalSpentMinor === b.totalSpentMinor &&
    a.lifetimeValueMinor === b.lifetimeValueMinor &&
    (a.lastBooking?.getTime() ?? null) === (b.lastBooking?.getTime() ?? null)
  );
}

export interface Analytics {
  totalCustomers: number;
  activeCustomers: number;
  followers: number;
  totalRevenue: number;
  averageOrderValue: number;
  customerRetentionRate: number;
}

/** Seller analytics over their relationships (amounts in minor units in, major units out). */
export function analyticsOf(
  rows: Array<{ status: string; isFollower: boolean; totalBookings: number; totalSpentMinor: number }>,
): Analytics {
  const revenue = rows.reduce((sum, row) => sum + row.totalSpentMinor, 0);
  const bookings = rows.reduce((sum, row) => sum + row.totalBookings, 0);
  const once = rows.filter((row) => row.totalBookings >= 1).length;
  const returning = rows.filter((row) => row.totalBookings >= 2).length;
  return {
    totalCustomers: rows.length,
    activeCustomers: rows.filter((row) => row.status === 'Active').length,
    followers: rows.filter((row) => row.isFollower).length,
    totalRevenue: revenue / 100,
    averageOrderValue: bookings === 0 ? 0 : Math.round(revenue / bookings) / 100,
    customerRetentionRate: once === 0 ? 0 : Math.round((returning / once) * 10_000) / 10_000,
  };
}
