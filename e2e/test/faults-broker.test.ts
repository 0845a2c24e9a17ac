import { startDisposableBroker, type BrokerHandle } from '@mkt/infra';
import {
  apiOf,
  auditEvents,
  book,
  checkWallets,
  dayFromNow,
  loginAdmin,
  metric,
  offerSoonSlot,
  pool,
  register,
  report,
  slotsOf,
  topUp,
  waitFor,
  waitForSlotStart,
  type Offer,
  type Session,
  type Slot,
} from './fixtures';
import { startSystem, type System } from './system';

// RabbitMQ stopped while bookings, cancellations, session ends and transfers go on, then started:
// every event is delivered, the CRM's totals and the review service's eligibility are exact, and
// a second delivery of every event changes nothing.

let broker: BrokerHandle;
let system: System;
beforeAll(async () => {
  broker = await startDisposableBroker();
  system = await startSystem({ amqpUrl: broker.url });
}, 180_000);
afterAll(async () => {
  await system?.stop();
  await broker?.stop();
}, 60_000);

const PRICE = 100;
const BOOKINGS_PER_PAIR = 5;
const REFUND = 40;

test('a broker outage during bookings, session ends and transfers loses nothing and applies nothing twice', async () => {
  const admin = await loginAdmin(system);
  const sellers = await Promise.all([register(system, 'seller', 'Seller A'), register(system, 'seller', 'Seller B')]);
  const buyers = await Promise.all([0, 1, 2, 3].map((i) => register(system, 'buyer', `Buyer ${i}`)));
  for (const buyer of buyers) await topUp(system, buyer, 3_000);
  // Group sessions open all day: the buyers who end up with a completed session share one slot
  // that starts 45 to 105 s from here (booked and started before it, ended once it begins). What
  // comes before it (the broker stopped and noticed, the bookings, cancellations and starts) took
  // under 10 s on two cores at a load of 12; the rest of the lead is waited out. The soon slot's
  // bookings go first, and a run too slow to book it in time fails saying so.
  const soon = await Promise.all(
    sellers.map((seller) => offerSoonSlot(system, seller, admin, { priceMajor: PRICE, capacity: 4, allDay: true, leadSeconds: 45 })),
  );
  const offers = soon.map(({ offer }) => offer);
  const soonest = Math.min(...soon.map(({ startsAt }) => startsAt.getTime()));
  const auditQueue = `${system.namespace}.test-audit.outage`;
  const before = await auditEvents(system, { keys: ['consultation.#'], queue: auditQueue });
  await before.close(false);

  await broker.stopBroker();
  // Still ready: the outbox keeps the events, and `/readyz` only reports the broker.
  const noticed = await waitFor(
    'the services to notice the broker is gone',
    async () =>
      Promise.all(
        (['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'] as const).map(async (name) => {
          const res = await fetch(`${system.processes[name].url}/readyz`);
          return { status: res.status, broker: ((await res.json()) as { data?: { checks?: { broker?: string } } }).data?.checks?.broker };
        }),
      ),
    (all) => all.every((r) => r.broker === 'down'),
  );
  expect(noticed.map((r) => r.status)).toEqual(noticed.map(() => 200));

  // Bookings: each buyer books BOOKINGS_PER_PAIR slots of each seller's consultation; the first
  // is the soon-starting slot for every buyer of seller A and the first two of seller B.
  const date = dayFromNow(4);
  const near = soon.map(({ slot }) => slot);
  const completes = (b: number, o: number) => o === 0 || b < 2;
  const work: Array<{ buyer: Session; offer: Offer; slot: Slot; soon: boolean }> = [];
  buyers.forEach((buyer, b) =>
    offers.forEach((offer, o) => {
      for (let k = 0; k < BOOKINGS_PER_PAIR; k += 1) {
        const first = k === 0 && completes(b, o);
        work.push({ buyer, offer, soon: first, slot: first ? near[o]! : slotsOf(offer, date)[b * BOOKINGS_PER_PAIR + k]! });
      }
    }),
  );
  // The soon slot's bookings first (the pool starts its tasks in order); the answers in `work`'s order.
  const order = [...work.keys()].sort((a, b) => Number(work[b]!.soon) - Number(work[a]!.soon));
  if (Date.now() > soonest - 5_000)
    throw new Error(`too slow: the soon slot starts in ${Math.round((soonest - Date.now()) / 1000)} s, before its bookings could be made`);
  const answers = await pool(
    6,
    order.map((i) => () => book(system, work[i]!.buyer, work[i]!.offer, work[i]!.slot)),
  );
  const booked = work.map((_, i) => answers[order.indexOf(i)]!);
  expect(booked.map((res) => res.status)).toEqual(work.map(() => 200));
  const bookingsOf = (buyer: Session, offer: Offer) =>
    booked.filter((_, i) => work[i]!.buyer === buyer && work[i]!.offer === offer).map((res) => res.body.data);

  // One cancellation with a partial refund per pair; each seller's soon-starting session ended.
  const cancels: Promise<{ status: number }>[] = [];
  const ends: Array<{ buyer: Session; offer: Offer }> = [];
  const toEnd: Array<{ seller: Session; sessionId: string }> = [];
  for (const [b, buyer] of buyers.entries()) {
    for (const [o, offer] of offers.entries()) {
      const [first, second] = bookingsOf(buyer, offer);
      cancels.push(
        apiOf(system, buyer)('POST', '/consultations/bookings/cancel', {
          bookingId: second.bookingId,
          refundRequested: true,
          refundAmount: REFUND,
        }),
      );
      if (completes(b, o)) ends.push({ buyer, offer });
      if (b === 0) {
        const seller = sellers[o]!;
        const started = await apiOf(system, seller)('POST', `/consultations/sessions/${first.sessionId}/start`, {});
        expect(started.status).toBe(200);
        toEnd.push({ seller, sessionId: first.sessionId });
      }
    }
  }
  expect((await Promise.all(cancels)).map((res) => res.status)).toEqual(cancels.map(() => 200));
  // A session ends only once its slot has begun (still during the outage).
  await waitForSlotStart(new Date(Math.max(...soon.map(({ startsAt }) => startsAt.getTime()))));
  for (const { seller, sessionId } of toEnd) {
    const ended = await apiOf(system, seller)('POST', `/consultations/sessions/${sessionId}/end`, { sessionSummary: 'Done' });
    expect(ended.status).toBe(200);
  }

  // Transfers between the buyers' wallets need no broker at all.
  const transfers = await pool(
    4,
    Array.from({ length: 20 }, (_, i) => () => {
      const from = buyers[i % buyers.length]!;
      const to = buyers[(i + 1) % buyers.length]!;
      return apiOf(system, from)('POST', '/v1/wallet/transfers', { toUserId: to.id, amount: 10_00, currency: 'ETB' });
    }),
  );
  expect(transfers.map((res) => res.body.data?.status)).toEqual(transfers.map(() => 'Completed'));

  await broker.startBroker();
  const audit = await auditEvents(system, { keys: ['consultation.#'], queue: auditQueue });
  const expected = {
    confirmed: work.length,
    cancelled: buyers.length * offers.length,
    completed: offers.length,
  };
  const crmTotals = async () => {
    const rows = new Map<string, { totalBookings: number; totalSpent: number }>();
    for (const seller of sellers) {
      const res = await apiOf(system, seller)('GET', `/customers/seller/${seller.id}?limit=100`);
      for (const row of res.body.data?.customers ?? []) rows.set(`${seller.id}|${row.buyerId}`, row);
    }
    return rows;
  };
  const exact = { totalBookings: BOOKINGS_PER_PAIR - 1, totalSpent: BOOKINGS_PER_PAIR * PRICE - REFUND };
  const allExact = (rows: Map<string, { totalBookings: number; totalSpent: number }>) =>
    sellers.every((seller) =>
      buyers.every((buyer) => {
        const row = rows.get(`${seller.id}|${buyer.id}`);
        return row?.totalBookings === exact.totalBookings && row.totalSpent === exact.totalSpent;
      }),
    );
  await waitFor(
    'every event after the broker came back',
    async () => audit.all().length,
    (n) => n >= expected.confirmed + expected.cancelled + expected.completed,
    60_000,
  );
  const totals = await waitFor('exact CRM totals', crmTotals, allExact, 60_000);
  const eligibility = async () =>
    Promise.all(
      buyers.flatMap((buyer) =>
        offers.map(async (offer) => (await apiOf(system, buyer)('GET', `/reviews/consultation/${offer.id}/status`)).body.data?.canReview),
      ),
    );
  const expectedEligibility = buyers.flatMap((buyer) =>
    offers.map((offer) => ends.some((end) => end.buyer === buyer && end.offer === offer)),
  );
  await waitFor('review eligibility', eligibility, (values) => values.every((value, i) => value === expectedEligibility[i]), 30_000);

  const brokerRepeats = audit.repeats();
  // Every event once more, as a redelivery would bring it: nothing may change.
  const crmQueue = `${system.namespace}.crm.bookings`;
  const ackedBefore = await metric(system.processes.crm.url, 'marketplace_events_consumed_total', { queue: crmQueue, outcome: 'acked' });
  const replayed = audit.all();
  for (const event of replayed) await audit.publish(event.type, Buffer.from(JSON.stringify(event)), event.id);
  await waitFor(
    'the CRM to take the repeated events',
    () => metric(system.processes.crm.url, 'marketplace_events_consumed_total', { queue: crmQueue, outcome: 'acked' }),
    (acked) => acked >= ackedBefore + replayed.length,
    30_000,
  );
  const after = await crmTotals();
  expect(allExact(after)).toBe(true);
  expect(await eligibility()).toEqual(expectedEligibility);

  const wallets = await checkWallets(system);
  const delivered = {
    confirmed: audit.ofType('consultation.booking.confirmed').length,
    cancelled: audit.ofType('consultation.booking.cancelled').length,
    completed: audit.ofType('consultation.session.completed').length,
  };
  const appliedBookings = [...totals.values()].reduce((sum, row) => sum + row.totalBookings, 0);
  const duplicated = [...after.values()].reduce((sum, row) => sum + Math.max(0, row.totalBookings - exact.totalBookings), 0);
  report('broker outage', {
    sentConfirmed: expected.confirmed,
    sentCancelled: expected.cancelled,
    sentCompleted: expected.completed,
    delivered: delivered.confirmed + delivered.cancelled + delivered.completed,
    brokerRepeats,
    appliedBookings,
    lost: expected.confirmed + expected.cancelled + expected.completed - (delivered.confirmed + delivered.cancelled + delivered.completed),
    replayedAgain: replayed.length,
    duplicated,
    transfers: transfers.length,
  });
  expect(delivered).toEqual(expected);
  expect(appliedBookings).toBe(buyers.length * sellers.length * exact.totalBookings);
  // Money is conserved whether bookings are paid from wallets or not: it only came from top-ups.
  expect(wallets.mismatched).toEqual([]);
  expect(wallets.availableMinor + wallets.heldMinor).toBe(wallets.completedTopUpsMinor - wallets.settledPayoutsMinor);
  expect(wallets.completedTopUpsMinor).toBe(buyers.length * 3_000_00);
  await audit.close();
}, 300_000);
