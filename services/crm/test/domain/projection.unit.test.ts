import { makeEvent, type EventData, type EventType, type IntegrationEvent } from '@mkt/contracts';
import {
  onBookingCancelled,
  onBookingConfirmed,
  onBookingRefundCompleted,
  onSessionCompleted,
  onSessionNoShow,
  onUserRegistered,
  pairsOf,
  type ProjectionUpdate,
} from '../../src/domain/projection';
import type { BookingFact } from '../../src/domain/records';
import { analyticsOf, totalsOf } from '../../src/domain/totals';

// The CRM's projection ("Totals, kept true by events"), decided and applied in memory: the
// facts merged as the repository merges them, the totals as the projection recomputes them.

const S = 'seller-1';
const B = 'buyer-1';
const at = (day: number) => `2030-01-${String(day).padStart(2, '0')}T10:00:00.000Z`;
const ev = <T extends EventType>(type: T, data: EventData<T>, occurredAt: string): IntegrationEvent<T> => ({
  ...makeEvent(type, data, { source: 'test' }),
  occurredAt,
});

const confirm = (bookingId: string, totalAmountMinor: number, day = 1) =>
  onBookingConfirmed(
    ev(
      'consultation.booking.confirmed',
      {
        bookingId,
        consultationId: 'con_x',
        sellerId: S,
        buyerId: B,
        totalAmountMinor,
        currency: 'ETB',
        date: '2030-01-01',
        startTime: '10:00',
        consultationCategory: 'Career',
      },
      at(day),
    ),
  );
const cancel = (bookingId: string, refundAmountMinor: number, day = 2) =>
  onBookingCancelled(ev('consultation.booking.cancelled', { bookingId, sellerId: S, buyerId: B, refundAmountMinor }, at(day)));
const refunded = (bookingId: string, refundAmountMinor: number, day = 3) =>
  onBookingRefundCompleted(
    ev(
      'wallet.booking_refund.completed',
      { bookingId, sellerId: S, buyerId: B, refundAmountMinor, capturedAmountMinor: 0, currency: 'ETB' },
      at(day),
    ),
  );

/** The facts after these updates, merged field by field as `$set` upserts do. */
function merged(updates: ProjectionUpdate[]): BookingFact[] {
  const facts = new Map<string, BookingFact>();
  for (const { fact } of updates) {
    if (!fact) continue;
    const base: BookingFact = facts.get(fact.bookingId) ?? {
      _id: fact.bookingId,
      sellerId: S,
      buyerId: B,
      totalMinor: null,
      refundMinor: null,
      refundedMinor: null,
      refundedAt: null,
      confirmedAt: null,
      cancelledAt: null,
    };
    facts.set(fact.bookingId, { ...base, ...fact.set });
  }
  return [...facts.values()];
}
const totalsAfter = (updates: ProjectionUpdate[]) => {
  const { totalBookings, totalSpentMinor } = totalsOf(merged(updates));
  return { totalBookings, totalSpentMinor };
};

describe('totals from the booking events, whatever their order and however often', () => {
  const cases: Array<[string, ProjectionUpdate[], { totalBookings: number; totalSpentMinor: number }]> = [
    ['one confirm', [confirm('a', 500_00)], { totalBookings: 1, totalSpentMinor: 500_00 }],
    ['the same confirm twice', [confirm('a', 500_00), confirm('a', 500_00)], { totalBookings: 1, totalSpentMinor: 500_00 }],
    [
      'a cancel takes the booking and its refund off',
      [confirm('a', 500_00), confirm('b', 300_00), cancel('a', 400_00)],
      { totalBookings: 1, totalSpentMinor: 400_00 },
    ],
    [
      'a refund larger than the booking: never below zero',
      [confirm('a', 100_00), cancel('a', 999_00)],
      { totalBookings: 0, totalSpentMinor: 0 },
    ],
    ['a cancel before its confirm', [cancel('a', 500_00), confirm('a', 500_00)], { totalBookings: 0, totalSpentMinor: 0 }],
    ['a cancel alone waits for its confirm', [cancel('a', 500_00)], { totalBookings: 0, totalSpentMinor: 0 }],
    [
      "the wallet's refund replaces the amount asked",
      [confirm('a', 500_00), cancel('a', 350_00), refunded('a', 300_00)],
      { totalBookings: 0, totalSpentMinor: 200_00 },
    ],
    [
      "the wallet's refund first",
      [refunded('a', 300_00), confirm('a', 500_00), cancel('a', 350_00)],
      { totalBookings: 0, totalSpentMinor: 200_00 },
    ],
    [
      'a refund without a cancel takes nothing off',
      [refunded('a', 300_00), confirm('a', 500_00)],
      { totalBookings: 1, totalSpentMinor: 500_00 },
    ],
    [
      'the refund twice counts once',
      [confirm('a', 500_00), cancel('a', 500_00), refunded('a', 200_00), refunded('a', 200_00)],
      { totalBookings: 0, totalSpentMinor: 300_00 },
    ],
  ];
  test.each(cases)('%s', (_name, updates, expected) => expect(totalsAfter(updates)).toEqual(expected));

  test('lastBooking is the newest confirm; lifetimeValue is totalSpent', () => {
    const totals = totalsOf(merged([confirm('a', 100, 5), confirm('b', 200, 3)]));
    expect(totals).toEqual({ totalBookings: 2, totalSpentMinor: 300, lifetimeValueMinor: 300, lastBooking: new Date(at(5)) });
  });
});

describe('what each event changes', () => {
  test("a confirm: its fact, the pair, the seller's category, the totals and an interaction", () => {
    expect(confirm('a', 500, 4)).toEqual({
      fact: { bookingId: 'a', set: { sellerId: S, buyerId: B, totalMinor: 500, confirmedAt: new Date(at(4)) } },
      pairs: [{ sellerId: S, buyerId: B }],
      sellerCategory: 'Career',
      recompute: true,
      interactionAt: new Date(at(4)),
    });
  });
  test('a cancel and a refund: their fact and the totals, no interaction', () => {
    expect(cancel('a', 5, 6)).toEqual({
      fact: { bookingId: 'a', set: { sellerId: S, buyerId: B, refundMinor: 5, cancelledAt: new Date(at(6)) } },
      pairs: [{ sellerId: S, buyerId: B }],
      recompute: true,
    });
    expect(refunded('a', 5, 7)).toMatchObject({ fact: { set: { refundedMinor: 5, refundedAt: new Date(at(7)) } }, recompute: true });
    expect(refunded('a', 5)).not.toHaveProperty('interactionAt');
  });

  const session = { sessionId: 's', consultationId: 'c', buyerIds: [B, 'buyer-2'] };
  test.each<[string, ProjectionUpdate, ProjectionUpdate]>([
    [
      'a completed session: an interaction with each buyer at its end',
      onSessionCompleted(ev('consultation.session.completed', { ...session, sellerId: S, endedAt: at(9) }, at(10))),
      {
        pairs: [
          { sellerId: S, buyerId: B },
          { sellerId: S, buyerId: 'buyer-2' },
        ],
        recompute: false,
        interactionAt: new Date(at(9)),
      },
    ],
    [
      'a no-show: when it was marked',
      onSessionNoShow(ev('consultation.session.no_show', { ...session, sellerId: S, markedAt: at(8) }, at(10))),
      {
        pairs: [
          { sellerId: S, buyerId: B },
          { sellerId: S, buyerId: 'buyer-2' },
        ],
        recompute: false,
        interactionAt: new Date(at(8)),
      },
    ],
    [
      "a no-show without markedAt: the event's time",
      onSessionNoShow(ev('consultation.session.no_show', { ...session, sellerId: S }, at(10))),
      {
        pairs: [
          { sellerId: S, buyerId: B },
          { sellerId: S, buyerId: 'buyer-2' },
        ],
        recompute: false,
        interactionAt: new Date(at(10)),
      },
    ],
    [
      'a no-show without a seller: nothing',
      onSessionNoShow(ev('consultation.session.no_show', { ...session, markedAt: at(8) }, at(10))),
      { pairs: [], recompute: false, interactionAt: new Date(at(8)) },
    ],
  ])('%s', (_name, decided, expected) => expect(decided).toEqual(expected));

  test('a registered user: name and role', () => {
    const event = ev(
      'identity.user.registered',
      { userId: 'u1', referenceId: 'MKT-USR-U1', role: 'buyer', fullName: 'Sara Tesfaye', email: 'u1@x.test' },
      at(1),
    );
    expect(onUserRegistered(event)).toEqual({ _id: 'u1', referenceId: 'MKT-USR-U1', fullName: 'Sara Tesfaye', role: 'buyer' });
  });

  test('the rebuild recomputes each pair once', () => {
    expect(
      pairsOf([
        { sellerId: S, buyerId: B },
        { sellerId: S, buyerId: B },
        { sellerId: S, buyerId: 'buyer-2' },
      ]),
    ).toEqual([
      { sellerId: S, buyerId: B },
      { sellerId: S, buyerId: 'buyer-2' },
    ]);
  });
});

describe('seller analytics', () => {
  const row = (status: string, isFollower: boolean, totalBookings: number, totalSpentMinor: number) => ({
    status,
    isFollower,
    totalBookings,
    totalSpentMinor,
  });
  test.each([
    [
      'nobody: zeros, not NaN',
      [],
      { totalCustomers: 0, activeCustomers: 0, followers: 0, totalRevenue: 0, averageOrderValue: 0, customerRetentionRate: 0 },
    ],
    [
      'revenue ÷ bookings; customers with ≥ 2 bookings ÷ those with ≥ 1',
      [row('Active', true, 2, 300_00), row('Active', false, 1, 150_00), row('Blocked', false, 1, 0), row('Inactive', true, 0, 0)],
      { totalCustomers: 4, activeCustomers: 2, followers: 2, totalRevenue: 450, averageOrderValue: 112.5, customerRetentionRate: 0.3333 },
    ],
  ])('%s', (_name, rows, expected) => expect(analyticsOf(rows)).toEqual(expected));
});
