import type { JsonResponse } from '@mkt/infra';
import {
  apiOf,
  book,
  checkWallets,
  dayFromNow,
  fund,
  loginAdmin,
  offerConsultation,
  openDatabase,
  pool,
  register,
  report,
  slotsOf,
  waitFor,
  type Offer,
  type Session,
} from './fixtures';
import { startSystem, type System } from './system';

// Hundreds of concurrent bookings and transfers through the gateway, on few places and little
// money so that they contend; afterwards the invariants hold: no slot over its capacity, no day
// over its limit, every wallet's ledger sums to its balance, the money in the system conserved.

let system: System;
beforeAll(async () => {
  system = await startSystem({ envOf: { wallet: { LIMIT_DAILY: '1000', LIMIT_WEEKLY: '1000', LIMIT_MONTHLY: '1000' } } });
}, 90_000);
afterAll(() => system?.stop(), 60_000);

// LOAD_SCALE=n multiplies the requests and the days of places: a longer soak than CI's.
const SCALE = Math.max(1, Number(process.env.LOAD_SCALE ?? 1));
const CAPACITY = 3;
const PER_DAY = 7;
const BOOKINGS = 300 * SCALE;
const TRANSFERS = 300 * SCALE;

/** A seeded pseudo-random sequence: the same contention on every run. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

test(
  'hundreds of concurrent bookings and transfers keep every capacity, ledger and total exact',
  async () => {
    const admin = await loginAdmin(system);
    const sellers = await Promise.all([0, 1, 2].map(() => register(system, 'seller')));
    const buyers = await Promise.all(Array.from({ length: 12 }, () => register(system, 'buyer')));
    const everyone: Session[] = [...sellers, ...buyers];
    await fund(system, everyone, 2_000);
    // Three slots a day on two days, three places each, at most PER_DAY bookings a day.
    const offers: Offer[] = await Promise.all(
      sellers.map((seller) =>
        offerConsultation(system, seller, admin, {
          capacity: CAPACITY,
          duration: 60,
          from: '09:00:00',
          to: '12:00:00',
          maxBookingsPerDay: PER_DAY,
          priceMajor: 25,
        }),
      ),
    );
    const days = Array.from({ length: 2 * SCALE }, (_, i) => dayFromNow(8 + i));
    const next = random(16);
    const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)]!;
    const tasks: Array<() => Promise<{ kind: 'booking' | 'transfer'; res: JsonResponse }>> = [];
    for (let i = 0; i < BOOKINGS + TRANSFERS; i += 1) {
      if (i % 2 === 0) {
        const offer = pick(offers);
        const slot = pick(slotsOf(offer, pick(days), '09:00', '12:00'));
        const buyer = pick(buyers);
        tasks.push(async () => ({ kind: 'booking', res: await book(system, buyer, offer, slot) }));
      } else {
        const from = pick(everyone);
        let to = pick(everyone);
        while (to === from) to = pick(everyone);
        const amount = Math.floor(next() * 900_00) + 1;
        tasks.push(async () => ({
          kind: 'transfer',
          res: await apiOf(system, from)('POST', '/v1/wallet/transfers', { toUserId: to.id, amount, currency: 'ETB' }),
        }));
      }
    }
    const results = await pool(32, tasks);
    const tally = (kind: string) => {
      const counts: Record<string, number> = {};
      for (const { res } of results.filter((result) => result.kind === kind)) {
        const key = res.status === 200 ? String(res.status) : `${res.status}:${res.body?.errors?.[0]?.code}`;
        counts[key] = (counts[key] ?? 0) + 1;
      }
      return counts;
    };
    const bookingOutcomes = tally('booking');
    const transferOutcomes = tally('transfer');
    const unexpected = results.filter(
      ({ kind, res }) =>
        res.status !== 200 &&
        !(kind === 'booking' && res.status === 422 && ['slot_unavailable', 'insufficient_funds'].includes(res.body?.errors?.[0]?.code)) &&
        !(kind === 'transfer' && res.status === 422 && res.body?.errors?.[0]?.code === 'insufficient_funds'),
    );
    expect(unexpected.map(({ kind, res }) => ({ kind, status: res.status, body: res.body }))).toEqual([]);

    const db = await openDatabase(system.mongoUrl, system.dbName('consultation'));
    const bookings = await db
      .collection('bookings')
      .find({ status: { $in: ['Confirmed', 'PaymentPending'] } })
      .toArray();
    const slotPlaces = await db.collection('slot_places').find().toArray();
    const dayPlaces = await db.collection('day_places').find().toArray();
    await db.close();
    const count = (key: string) => {
      const counts = new Map<string, number>();
      for (const booking of bookings)
        counts.set(
          booking[key] as string,
          (counts.get(booking[key] as string) ?? 0) + ((key === 'slotKey' ? booking.places : 1) as number),
        );
      return counts;
    };
    const perSlot = count('slotKey');
    const perDay = count('dayKey');
    const overCapacity = [...perSlot].filter(([, places]) => places > CAPACITY);
    const overDay = [...perDay].filter(([, n]) => n > PER_DAY);
    // The place counters agree with the bookings they count.
    const counterDrift = slotPlaces.filter((place) => (place.booked as number) !== (perSlot.get(place._id as string) ?? 0));
    const dayDrift = dayPlaces.filter((place) => (place.booked as number) !== (perDay.get(place._id as string) ?? 0));
    const accepted = results.filter(({ kind, res }) => kind === 'booking' && res.status === 200).length;

    const wallets = await waitFor(
      'every transfer finished',
      () => checkWallets(system),
      (check) => !check.transfersByStatus.Pending && !check.transfersByStatus.Debited,
      30_000,
    );
    const balances = await Promise.all(everyone.map(async (user) => (await apiOf(system, user)('GET', '/v1/wallet')).body.data));
    const apiTotalMinor = balances.reduce(
      (sum, wallet) => sum + Math.round(wallet.etbAvailableBalance * 100) + Math.round((wallet.heldBalance ?? 0) * 100),
      0,
    );
    const completedTransfers = results.filter(({ kind, res }) => kind === 'transfer' && res.body?.data?.status === 'Completed').length;
    report('load with invariants', {
      bookings: BOOKINGS,
      bookingOutcomes: JSON.stringify(bookingOutcomes),
      scale: SCALE,
      placesAvailable: offers.length * days.length * 3 * CAPACITY,
      confirmed: bookings.length,
      overCapacity: overCapacity.length,
      overDayLimit: overDay.length,
      counterDrift: counterDrift.length + dayDrift.length,
      transfers: TRANSFERS,
      transferOutcomes: JSON.stringify(transferOutcomes),
      ledgerMismatches: wallets.mismatched.length,
      moneyInMinor: wallets.completedTopUpsMinor,
      moneyHeldMinor: wallets.availableMinor + wallets.heldMinor,
      apiTotalMinor,
    });
    expect(overCapacity).toEqual([]);
    expect(overDay).toEqual([]);
    expect(counterDrift).toEqual([]);
    expect(dayDrift).toEqual([]);
    expect(bookings.length).toBe(accepted);
    expect(accepted).toBeGreaterThan(0);
    expect(completedTransfers).toBe(wallets.transfersByStatus.Completed ?? 0);
    expect(wallets.mismatched).toEqual([]);
    expect(wallets.completedTopUpsMinor).toBe(everyone.length * 2_000_00);
    expect(wallets.availableMinor + wallets.heldMinor).toBe(wallets.completedTopUpsMinor - wallets.settledPayoutsMinor);
    expect(apiTotalMinor).toBe(wallets.completedTopUpsMinor);

    // The CRM counts exactly the confirmed bookings.
    const crm = await waitFor(
      'the CRM to count the confirmed bookings',
      async () => {
        let total = 0;
        for (const seller of sellers) {
          const res = await apiOf(system, seller)('GET', `/customers/seller/${seller.id}?limit=100`);
          for (const row of res.body.data?.customers ?? []) total += row.totalBookings;
        }
        return total;
      },
      (total) => total >= accepted,
      30_000,
    );
    expect(crm).toBe(accepted);
  },
  240_000 * SCALE,
);
