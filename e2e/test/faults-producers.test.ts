import type { JsonResponse } from '@mkt/infra';
import {
  apiOf,
  auditEvents,
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
} from './fixtures';
import { startSystem, type System } from './system';

// A producer killed with SIGKILL while it writes: what it had accepted is in its outbox, and
// after the restart the sweeper publishes it. Nothing accepted is lost.

let system: System;
beforeAll(async () => {
  // Top-ups beyond the default daily limit of 10 per user.
  system = await startSystem({ envOf: { wallet: { LIMIT_DAILY: '1000', LIMIT_WEEKLY: '1000', LIMIT_MONTHLY: '1000' } } });
}, 90_000);
afterAll(() => system?.stop(), 60_000);

/** Runs `tasks` and SIGKILLs the process as soon as `killAfter` of them have answered. */
async function killDuring(name: 'consultation' | 'wallet', killAfter: number, tasks: Array<() => Promise<JsonResponse>>) {
  let answered = 0;
  let killed: Promise<unknown> | null = null;
  const results = await pool(
    8,
    tasks.map((task) => async () => {
      const res = await task().catch(() => ({ status: 0, body: null }) as unknown as JsonResponse);
      answered += 1;
      if (answered === killAfter) killed = system.processes[name].kill('SIGKILL');
      return res;
    }),
  );
  await killed;
  return results;
}

async function pendingOutbox(dbName: string, collection: string): Promise<number> {
  const db = await openDatabase(system.mongoUrl, dbName);
  try {
    const docs = await db
      .collection(collection)
      .find({ 'pendingEvents.0': { $exists: true } })
      .toArray();
    return docs.reduce((sum, doc) => sum + (doc.pendingEvents as unknown[]).length, 0);
  } finally {
    await db.close();
  }
}

test('consultation SIGKILLed right after bookings: every confirmed booking reaches the CRM exactly once', async () => {
  const admin = await loginAdmin(system);
  const seller = await register(system, 'seller');
  const buyers = await Promise.all([0, 1, 2, 3].map(() => register(system, 'buyer')));
  await fund(system, buyers, 1_000);
  const offer = await offerConsultation(system, seller, admin, { priceMajor: 50, duration: 15 });
  const audit = await auditEvents(system, { keys: ['consultation.booking.*'] });
  const slots = slotsOf(offer, dayFromNow(5));

  const results = await killDuring(
    'consultation',
    12,
    slots.slice(0, 40).map((slot, i) => () => book(system, buyers[i % buyers.length]!, offer, slot)),
  );
  const leftInOutbox = await pendingOutbox(system.dbName('consultation'), 'bookings');
  await system.processes.consultation.start();

  const db = await openDatabase(system.mongoUrl, system.dbName('consultation'));
  const confirmed = (await db.collection('bookings').find({ status: 'Confirmed' }).toArray()).map((booking) => booking._id as string);
  await db.close();
  const accepted = results.filter((res) => res.status === 200).map((res) => res.body.data.bookingId as string);
  expect(confirmed).toEqual(expect.arrayContaining(accepted));

  await waitFor(
    'a booking.confirmed event for every confirmed booking',
    async () => new Set(audit.ofType('consultation.booking.confirmed').map((event) => event.data.bookingId)),
    (ids) => confirmed.every((id) => ids.has(id)),
    60_000,
  );
  const crm = await waitFor(
    'the CRM to count every confirmed booking',
    async () => (await apiOf(system, seller)('GET', `/customers/seller/${seller.id}?limit=100`)).body.data?.customers ?? [],
    (rows: Array<{ totalBookings: number }>) => rows.reduce((sum, row) => sum + row.totalBookings, 0) >= confirmed.length,
    60_000,
  );
  const applied = crm.reduce((sum: number, row: { totalBookings: number }) => sum + row.totalBookings, 0);
  const delivered = audit.ofType('consultation.booking.confirmed').length;
  report('consultation SIGKILL after writes', {
    attempted: results.length,
    accepted: accepted.length,
    confirmedInDb: confirmed.length,
    leftInOutboxAtKill: leftInOutbox,
    delivered,
    applied,
    lost: confirmed.length - delivered,
    duplicated: applied - confirmed.length,
  });
  expect(delivered).toBe(confirmed.length);
  expect(applied).toBe(confirmed.length);
  await audit.close();
}, 180_000);

test('wallet SIGKILLed right after top-ups complete: every completed top-up is credited once and announced', async () => {
  const users = await Promise.all([0, 1, 2, 3, 4, 5].map(() => register(system, 'buyer')));
  const audit = await auditEvents(system, { keys: ['wallet.#'] });
  const links: Array<{ user: (typeof users)[number]; url: URL }> = [];
  for (const user of users) {
    for (let i = 0; i < 4; i += 1) {
      const created = await apiOf(system, user)('POST', `/wallets/users/${user.ref}/topup`, {
        amount: 10 + i,
        paymentMethod: 'Chapa',
        redirectUrl: 'http://localhost:3000/done',
      });
      expect(created.status).toBe(200);
      links.push({ user, url: new URL(created.body.data.paymentUrl) });
    }
  }
  const pay = (url: URL) => async (): Promise<JsonResponse> => {
    const res = await fetch(`${system.gateway}${url.pathname}/pay`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: url.searchParams.get('token')! }).toString(),
    });
    return { status: res.status, headers: res.headers, body: res.headers.get('location') };
  };
  const results = await killDuring(
    'wallet',
    8,
    links.map(({ url }) => pay(url)),
  );
  const leftInOutbox = await pendingOutbox(system.dbName('wallet'), 'topups');
  await system.processes.wallet.start();

  const db = await openDatabase(system.mongoUrl, system.dbName('wallet'));
  // This test's top-ups only: the system's other tests funded wallets too.
  const completed = await db
    .collection('topups')
    .find({ status: 'Completed', userId: { $in: users.map((user) => user.id) } })
    .toArray();
  await db.close();
  const paidOk = results.filter((res) => res.status === 303 && String(res.body).includes('status=Completed')).length;
  expect(completed.length).toBeGreaterThanOrEqual(paidOk);
  const references = completed.map((topUp) => topUp.referenceId as string);
  const missing = async () => {
    const seen = new Set(audit.ofType('wallet.topup.completed').map((event) => event.data.reference));
    return references.filter((reference) => !seen.has(reference));
  };
  await waitFor('a wallet.topup.completed event for every completed top-up', missing, (left) => left.length === 0, 60_000).catch(
    async (err: Error) => {
      const left = await missing();
      const check = await openDatabase(system.mongoUrl, system.dbName('wallet'));
      const docs = await check
        .collection('topups')
        .find({ referenceId: { $in: left } })
        .toArray();
      await check.close();
      const states = docs.map((doc) => ({ ref: doc.referenceId, status: doc.status, pending: (doc.pendingEvents as unknown[]).length }));
      const received = audit.all().map((event) => `${event.type}:${String(event.data.reference)}:${event.deliveries}`);
      const depth = JSON.stringify(await audit.depth());
      throw new Error(
        `${err.message}\nmissing in the database: ${JSON.stringify(states)}\naudit received: ${received.join(' ')}\naudit queue: ${depth}`,
      );
    },
  );
  const completedMinor = completed.reduce((sum, topUp) => sum + (topUp.amountMinor as number), 0);
  // A top-up the kill caught between its status and its credit is finished by the wallet's sweep.
  const credited = await waitFor(
    'every completed top-up credited',
    async () => {
      const balances = await Promise.all(users.map(async (user) => (await apiOf(system, user)('GET', '/v1/wallet')).body.data));
      return balances.reduce((sum, wallet) => sum + Math.round(wallet.etbAvailableBalance * 100), 0);
    },
    (sum) => sum >= completedMinor,
    60_000,
  );
  const wallets = await checkWallets(system);
  const delivered = audit.ofType('wallet.topup.completed').length;
  report('wallet SIGKILL after writes', {
    attempted: results.length,
    acceptedBeforeKill: paidOk,
    completedInDb: completed.length,
    leftInOutboxAtKill: leftInOutbox,
    delivered,
    creditedMinor: credited,
    completedMinor,
    lost: completed.length - delivered,
    duplicatedMinor: credited - completedMinor,
    ledgerMismatches: wallets.mismatched.length,
  });
  expect(delivered).toBe(completed.length);
  expect(credited).toBe(completedMinor);
  expect(wallets.mismatched).toEqual([]);
  await audit.close();
}, 180_000);
