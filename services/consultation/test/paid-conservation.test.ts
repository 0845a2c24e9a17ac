import type { BookingDoc } from '../src/domain/records';
import type { TestUser } from '@mkt/infra';
import { as, bookingBody, daysAhead, givenOffer, newUser, type Offer, models, walletModels } from './harness';
import { balanceOf, deliverSession, eventually, ledgerMatches, usePaidPair } from './paid-harness';

const app = usePaidPair();

/** A small seeded generator (mulberry32): a failure can be replayed with its seed. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

test('money is conserved across 100 random bookings, cancellations and completed sessions', async () => {
  const seed = Number(process.env.PAID_SEED ?? Date.now() % 1_000_000);
  const rand = random(seed);
  const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)]!;
  const opening = 2_000_00;
  const buyers = Array.from({ length: 6 }, () => newUser('buyer', { balanceMinor: opening }));
  const offers: Array<{ offer: Offer; priceMinor: number }> = [];
  for (const price of [500, 300, 200]) offers.push({ offer: await givenOffer(app, { basePrice: price }), priceMinor: price * 100 });
  const sellers = offers.map(({ offer }) => offer.seller);

  const confirmed: Array<{ id: string; buyer: TestUser; seller: TestUser; sessionId: string; totalMinor: number }> = [];
  const delivered = new Set<string>();
  const refunds = new Map<string, number>();
  const outcomes: Record<string, number> = {};
  const count = (what: string) => (outcomes[what] = (outcomes[what] ?? 0) + 1);

  for (let step = 0; step < 100; step += 1) {
    const roll = rand();
    const open = confirmed.filter((b) => !delivered.has(b.id) && !refunds.has(b.id));
    if (roll < 0.55 || open.length === 0) {
      const buyer = pick(buyers);
      const { offer, priceMinor } = pick(offers);
      const hour = 9 + Math.floor(rand() * 8);
      const res = await as(app, buyer)(
        'POST',
        '/consultations/bookings',
        bookingBody(offer, {
          date: daysAhead(2 + Math.floor(rand() * 5)),
          startTime: `${String(hour).padStart(2, '0')}:00`,
          endTime: `${String(hour + 1).padStart(2, '0')}:00`,
          subTotal: priceMinor / 100,
          totalAmount: priceMinor / 100,
        }),
      );
      if (res.status === 200) {
        expect(res.body.data.status).toBe('Confirmed');
        confirmed.push({
          id: res.body.data.bookingId,
          buyer,
          seller: offer.seller,
          sessionId: res.body.data.sessionId,
          totalMinor: priceMinor,
        });
        count('booked');
      } else {
        expect(res.status).toBe(422);
        expect(['slot_unavailable', 'insufficient_funds']).toContain(res.body.errors[0].code);
        count(res.body.errors[0].code);
      }
    } else if (roll < 0.8) {
      const booking = pick(open);
      const bySeller = rand() < 0.3;
      const refundMajor = Math.floor(rand() * (booking.totalMinor / 100 + 1));
      const res = await as(app, bySeller ? booking.seller : booking.buyer)('POST', '/consultations/bookings/cancel', {
        bookingId: booking.id,
        refundAmount: refundMajor,
      });
      expect(res.status).toBe(200);
      refunds.set(booking.id, bySeller ? booking.totalMinor : refundMajor * 100);
      count('cancelled');
    } else {
      const booking = pick(open);
      await deliverSession(app, booking.seller, booking.sessionId);
      delivered.add(booking.id);
      count('delivered');
    }
  }

  // Every settlement the events started has ended, and every refund is reported back.
  const settledIds = [...delivered, ...refunds.keys()];
  await eventually(
    () => walletModels().BookingHold.countDocuments({ _id: { $in: settledIds }, status: 'Settled' }),
    (n) => n === settledIds.length,
    30_000,
  );
  await eventually(
    () => models().Booking.countDocuments({ _id: { $in: [...refunds.keys()] }, refundStatus: 'Refunded' }),
    (n) => n === refunds.size,
    30_000,
  );

  const context = `seed ${seed}, ${JSON.stringify(outcomes)}`;
  // Each kind of step happened, so the sums below test something.
  expect({ context, kinds: ['booked', 'cancelled', 'delivered'].every((kind) => (outcomes[kind] ?? 0) > 0) }).toEqual({
    context,
    kinds: true,
  });
  const everyone = [...buyers, ...sellers];
  const balances = await Promise.all(everyone.map((user) => balanceOf(user)));
  const total = balances.reduce((sum, b) => sum + b.available + b.held, 0);
  const platform = (await walletModels().Wallet.findOne({ userId: 'platform' }).lean())?.availableMinor ?? 0;
  expect({ context, total, platform }).toEqual({ context, total: buyers.length * opening, platform: 0 }); // no fee configured
  for (const user of everyone)
    expect({ context, user: user.id, ledger: await ledgerMatches(user) }).toEqual({ context, user: user.id, ledger: true });
  for (const b of balances) expect(Math.min(b.available, b.held)).toBeGreaterThanOrEqual(0);

  for (const buyer of buyers) {
    const mine = confirmed.filter((b) => b.buyer.id === buyer.id);
    const held = mine.filter((b) => !delivered.has(b.id) && !refunds.has(b.id)).reduce((sum, b) => sum + b.totalMinor, 0);
    const spent = mine.reduce((sum, b) => sum + b.totalMinor - (refunds.get(b.id) ?? 0), 0);
    expect({ context, buyer: buyer.id, ...(await balanceOf(buyer)) }).toEqual({
      context,
      buyer: buyer.id,
      available: opening - spent,
      held,
    });
  }
  for (const seller of sellers) {
    const earned = confirmed
      .filter((b) => b.seller.id === seller.id && (delivered.has(b.id) || refunds.has(b.id)))
      .reduce((sum, b) => sum + b.totalMinor - (refunds.get(b.id) ?? 0), 0);
    expect({ context, seller: seller.id, ...(await balanceOf(seller)) }).toEqual({
      context,
      seller: seller.id,
      available: earned,
      held: 0,
    });
  }
  const stored = await models()
    .Booking.find({ _id: { $in: confirmed.map((b) => b.id) } })
    .lean<BookingDoc[]>();
  for (const booking of stored) expect(booking.status).toBe(refunds.has(booking._id) ? 'Cancelled' : 'Confirmed');
}, 120_000);
