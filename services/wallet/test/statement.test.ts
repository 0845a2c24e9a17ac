import { randomUUID } from 'node:crypto';
import { makeEvent, StatementEntryResponse } from '@mkt/contracts';
import { backfillLedgerChains } from '../src/db/ledger-chain.backfill';
import { bookingEventsConsumer } from '../src/events/bookings.consumer';
import {
  applyWalletOp,
  balancesOf,
  call,
  givenBalance,
  LedgerEntryModel,
  ledgerMatches,
  log,
  newUser,
  openWallet,
  tokenOf,
  uniqueName,
  useWallet,
  Wallet,
} from './harness';

const TOKEN = 'internal-token-for-the-tests-0123456789';
const walletApp = useWallet({ INTERNAL_API_TOKEN: TOKEN });

type User = ReturnType<typeof newUser>;
type Entry = ReturnType<typeof StatementEntryResponse.parse>;
const admin = newUser('admin');

const get = (user: User, path: string) => call(walletApp().url, 'GET', path, { token: tokenOf(user) });
const post = (user: User, path: string, body: object = {}) => call(walletApp().url, 'POST', path, { token: tokenOf(user), body });

/** A top-up paid on the sandbox checkout, as a browser pays it. */
async function topUp(user: User, amount: number): Promise<string> {
  const created = await post(user, `/wallets/users/${user.ref}/topup`, {
    amount,
    paymentMethod: 'Chapa',
    redirectUrl: 'https://shop.example/after-pay',
  });
  expect(created.status).toBe(200);
  const url = new URL(created.body.data.paymentUrl);
  const paid = await fetch(`${walletApp().url}${url.pathname}/pay`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: url.searchParams.get('token')! }).toString(),
  });
  expect(paid.status).toBe(303);
  return created.body.data.referenceId;
}

async function payout(user: User, amount: string): Promise<string> {
  const res = await post(user, `/wallets/users/${user.ref}/payout-request`, {
    amount,
    bankCode: 'CBE',
    accountNumber: '1000123456789',
    accountName: 'Abebe Kebede',
    reason: 'Earnings',
  });
  expect(res.status).toBe(200);
  return res.body.data.referenceId;
}

const hold = (buyer: User, seller: User, amountMinor: number, bookingId = uniqueName('bk'), extra: object = {}) =>
  call(walletApp().url, 'POST', '/internal/holds', {
    body: { bookingId, buyerId: buyer.id, buyerRef: buyer.ref, sellerId: seller.id, amountMinor, currency: 'ETB', ...extra },
    headers: { 'x-internal-token': TOKEN },
  }).then((res) => {
    expect(res.status).toBe(200);
    return bookingId;
  });

const handlers = () => bookingEventsConsumer(walletApp().parts.holds).handlers;
const completed = (bookingId: string, seller: User) =>
  handlers()['consultation.session.completed']!(
    makeEvent(
      'consultation.session.completed',
      {
        sessionId: 's',
        consultationId: 'c',
        sellerId: seller.id,
        buyerIds: [],
        endedAt: new Date().toISOString(),
        bookingIds: [bookingId],
      },
      { source: 'consultation' },
    ),
    { log },
  );
const cancelled = (bookingId: string, buyer: User, seller: User, refundAmountMinor: number) =>
  handlers()['consultation.booking.cancelled']!(
    makeEvent(
      'consultation.booking.cancelled',
      { bookingId, buyerId: buyer.id, sellerId: seller.id, refundAmountMinor },
      { source: 'consultation' },
    ),
    { log },
  );

/** Every page of a user's statement (newest first), following `nextCursor`. */
async function wholeStatement(user: User, query = '', limit = 2): Promise<Entry[]> {
  const entries: Entry[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 1000; pages += 1) {
    const res = await get(user, `/v1/wallet/transactions?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.status).toBe(200);
    expect(res.body.data.entries.length).toBeLessThanOrEqual(limit);
    entries.push(...res.body.data.entries.map((entry: unknown) => StatementEntryResponse.parse(entry)));
    cursor = res.body.data.nextCursor;
    if (cursor === null) return entries;
  }
  throw new Error('the statement never ended');
}

/** Oldest first, each entry's balances are the previous ones plus its deltas; the last are the wallet's. */
function expectRunningBalances(newestFirst: Entry[], balances: { available: number; held: number }) {
  let available = 0;
  let held = 0;
  for (const entry of [...newestFirst].reverse()) {
    available += entry.availableDeltaMinor;
    held += entry.heldDeltaMinor;
    expect({ id: entry.id, available: entry.availableAfterMinor, held: entry.heldAfterMinor }).toEqual({ id: entry.id, available, held });
  }
  expect({ available, held }).toEqual(balances);
}

async function settled(bookingId: string) {
  for (let i = 0; i < 50; i += 1) {
    await walletApp().parts.sweep();
    const state = await walletApp().parts.models.BookingHold.findById(bookingId).lean();
    if (state?.status === 'Settled') return;
  }
  throw new Error(`booking ${bookingId} never settled`);
}

describe('GET /v1/wallet/transactions: the statement', () => {
  test('a whole journey: the statement sums to the balance, entry by entry, for the buyer and the seller', async () => {
    const buyer = newUser();
    const seller = newUser('seller');
    await openWallet(seller.id, seller.ref, 'MKT');

    const topUpRef = await topUp(buyer, 1000);
    const transfer = await post(buyer, '/v1/wallet/transfers', { toUserId: seller.id, amount: 100_00, currency: 'ETB' });
    expect(transfer.body.data.status).toBe('Completed');
    const refunded = await hold(buyer, seller, 300_00);
    await cancelled(refunded, buyer, seller, 200_00);
    await settled(refunded);
    const captured = await hold(buyer, seller, 200_00);
    await completed(captured, seller);
    await settled(captured);
    const paidOut = await payout(seller, '150.00');
    for (const action of ['approve', 'process', 'complete'])
      expect((await post(admin, `/wallets/payout-requests/${paidOut}/${action}`)).status).toBe(200);
    const reversed = await payout(seller, '50.00');
    expect((await post(admin, `/wallets/payout-requests/${reversed}/reject`, { adminNotes: 'Wrong account' })).status).toBe(200);

    const buyerEntries = await wholeStatement(buyer);
    expect(buyerEntries.map((e) => [e.type, e.reference])).toEqual([
      ['booking_settle', captured],
      ['booking_hold', captured],
      ['booking_settle', refunded],
      ['booking_hold', refunded],
      ['transfer_debit', transfer.body.data.id],
      ['topup_credit', topUpRef],
    ]);
    expectRunningBalances(buyerEntries, await balancesOf(buyer));
    expect(await balancesOf(buyer)).toEqual({ available: 1000_00 - 100_00 - 100_00 - 200_00, held: 0 });

    const sellerEntries = await wholeStatement(seller);
    expect(sellerEntries.map((e) => [e.type, e.reference])).toEqual([
      ['payout_release', reversed],
      ['payout_hold', reversed],
      ['payout_settle', paidOut],
      ['payout_hold', paidOut],
      ['booking_capture', captured],
      ['booking_capture', refunded],
      ['transfer_credit', transfer.body.data.id],
    ]);
    expectRunningBalances(sellerEntries, await balancesOf(seller));
    expect(await balancesOf(seller)).toEqual({ available: 100_00 + 100_00 + 200_00 - 150_00, held: 0 });
    expect(sellerEntries.every((e) => e.currency === 'ETB')).toBe(true);
    // postedAt never goes back along the statement.
    const times = sellerEntries.map((e) => Date.parse(e.postedAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(await ledgerMatches(buyer)).toBe(true);
    expect(await ledgerMatches(seller)).toBe(true);

    // The CSV export: the same entries, newest first, after a header row.
    const csv = await fetch(`${walletApp().url}/v1/wallet/transactions.csv`, { headers: { authorization: `Bearer ${tokenOf(seller)}` } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="statement.csv"');
    const lines = (await csv.text()).split('\r\n');
    expect(lines[0]).toBe('id,postedAt,type,reference,currency,availableDeltaMinor,heldDeltaMinor,availableAfterMinor,heldAfterMinor');
    expect(lines.at(-1)).toBe('');
    expect(lines.slice(1, -1)).toEqual(
      sellerEntries.map((e) =>
        [
          e.id,
          e.postedAt,
          e.type,
          e.reference,
          e.currency,
          e.availableDeltaMinor,
          e.heldDeltaMinor,
          e.availableAfterMinor,
          e.heldAfterMinor,
        ].join(','),
      ),
    );
  });

  test('pages stay put while new entries arrive: no entry repeated or skipped', async () => {
    const user = newUser();
    for (let i = 0; i < 5; i += 1) await givenBalance(user, 10_00 + i);
    const first = await get(user, '/v1/wallet/transactions?limit=2');
    expect(first.body.data.entries).toHaveLength(2);
    // Three more entries arrive between the pages.
    for (let i = 0; i < 3; i += 1) await givenBalance(user, 1_00);
    const rest = [];
    let cursor = first.body.data.nextCursor as string | null;
    while (cursor) {
      const page = await get(user, `/v1/wallet/transactions?limit=2&cursor=${cursor}`);
      rest.push(...page.body.data.entries);
      cursor = page.body.data.nextCursor;
    }
    const amounts = [...first.body.data.entries, ...rest].map((e: Entry) => e.availableDeltaMinor);
    expect(amounts).toEqual([10_04, 10_03, 10_02, 10_01, 10_00]);
    expectRunningBalances(await wholeStatement(user), await balancesOf(user));
  });

  test('filters: by entry types and by a date range (bounds included)', async () => {
    const buyer = newUser();
    const seller = newUser('seller');
    await givenBalance(buyer, 500_00);
    await openWallet(seller.id, seller.ref, 'MKT');
    await post(buyer, '/v1/wallet/transfers', { toUserId: seller.id, amount: 10_00, currency: 'ETB' });
    const bookingId = await hold(buyer, seller, 20_00);
    const all = await wholeStatement(buyer);
    expect(all.map((e) => e.type)).toEqual(['booking_hold', 'transfer_debit', 'topup_credit']);

    const typed = await wholeStatement(buyer, '&type=booking_hold,topup_credit');
    expect(typed.map((e) => e.type)).toEqual(['booking_hold', 'topup_credit']);
    expect(typed[0]!.reference).toBe(bookingId);
    // Balances after stay the wallet's running balances, whatever is filtered out.
    expect(typed[0]).toMatchObject({ availableAfterMinor: 470_00, heldAfterMinor: 20_00 });

    const middle = all[1]!.postedAt;
    const from = await wholeStatement(buyer, `&from=${encodeURIComponent(middle)}`);
    expect(from.map((e) => e.id)).toEqual(all.filter((e) => e.postedAt >= middle).map((e) => e.id));
    const to = await wholeStatement(buyer, `&to=${encodeURIComponent(middle)}`);
    expect(to.map((e) => e.id)).toEqual(all.filter((e) => e.postedAt <= middle).map((e) => e.id));
    const future = await get(buyer, `/v1/wallet/transactions?from=${encodeURIComponent(new Date(Date.now() + 86_400_000).toISOString())}`);
    expect(future.body.data).toEqual({ entries: [], nextCursor: null });
    const csv = await fetch(`${walletApp().url}/v1/wallet/transactions.csv?type=transfer_debit`, {
      headers: { authorization: `Bearer ${tokenOf(buyer)}` },
    });
    const rows = (await csv.text()).split('\r\n').slice(1, -1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain(',transfer_debit,');
  });

  describe('a date range over a long history: the same entries as the plain filter, read by the chain’s unique keys', () => {
    const T0 = Date.parse('2026-03-01T00:00:00Z');
    const second = (n: number) => new Date(T0 + n * 1000);
    // A wallet of 5 entries the backfill numbered (places −4…0) and 400 of the chain (1…400),
    // posted in runs of equal times (7 entries a second), every 0.5 s of the chain a step.
    let user: User;
    let seeded: Array<{ id: string; seq: number; postedAt: Date }>;
    beforeAll(async () => {
      user = newUser();
      const wallet = await openWallet(user.id, user.ref, 'MKT');
      seeded = [];
      for (let seq = -4; seq <= 400; seq += 1)
        seeded.push({ id: `seed:${randomUUID()}`, seq, postedAt: second(Math.floor((seq + 4) / 7)) });
      let available = 0;
      await LedgerEntryModel.collection.insertMany(
        seeded.map(({ id, seq, postedAt }) => {
          available += 1_00;
          return {
            _id: id,
            walletId: wallet._id,
            type: 'topup_credit',
            availableDeltaMinor: 1_00,
            heldDeltaMinor: 0,
            reference: `seed-${seq}`,
            createdAt: postedAt,
            token: 'seed',
            seq,
            chainKey: `${wallet._id}:${seq}`,
            availableAfterMinor: available,
            heldAfterMinor: 0,
            postedAt,
          };
        }) as never[],
      );
      await Wallet.updateOne({ _id: wallet._id }, { $set: { availableMinor: available } });
    });

    /** What the plain filter on `postedAt` (bounds included) lists, newest first. */
    const plain = (from?: Date, to?: Date) =>
      seeded
        .filter((e) => (!from || e.postedAt >= from) && (!to || e.postedAt <= to))
        .sort((a, b) => b.seq - a.seq)
        .map((e) => e.id);
    const range = (from?: Date, to?: Date) =>
      `${from ? `&from=${encodeURIComponent(from.toISOString())}` : ''}${to ? `&to=${encodeURIComponent(to.toISOString())}` : ''}`;
    const last = () => seeded.at(-1)!.postedAt.getTime();

    test.each([
      ['a whole second of equal times', () => [second(10), second(10)]],
      ['from a run of equal times to another', () => [second(3), second(40)]],
      ['between two entries’ times (empty)', () => [new Date(T0 + 10_500), new Date(T0 + 10_900)]],
      ['before the first entry (empty)', () => [new Date(T0 - 86_400_000), new Date(T0 - 1)]],
      ['after the last entry (empty)', () => [new Date(last() + 1), new Date(last() + 86_400_000)]],
      ['reaching over both ends', () => [new Date(T0 - 86_400_000), new Date(last() + 86_400_000)]],
      ['the backfilled entries and the chain’s first', () => [second(0), second(1)]],
      ['from only, mid-run', () => [new Date(T0 + 30_400), undefined]],
      ['to only, mid-run', () => [undefined, new Date(T0 + 30_400)]],
      ['from exactly the last entry’s time', () => [new Date(last()), undefined]],
      ['to exactly the first entry’s time', () => [undefined, second(0)]],
    ] as Array<[string, () => [Date | undefined, Date | undefined]]>)('%s', async (_name, bounds) => {
      const [from, to] = bounds();
      const listed = await wholeStatement(user, range(from, to), 40);
      expect(listed.map((e) => e.id)).toEqual(plain(from, to));
    });

    test('the bounds are found without a query on postedAt (no scan of the history on any server)', async () => {
      const ledgerQueries: unknown[] = [];
      const db = walletApp().parts.models.LedgerEntry.db;
      db.set('debug', (collection: string, method: string, query: unknown) => {
        if (collection === 'ledger_entries') ledgerQueries.push({ method, query });
      });
      try {
        const page = await get(user, `/v1/wallet/transactions?limit=5${range(second(20), second(30))}`);
        expect(page.body.data.entries.map((e: Entry) => e.id)).toEqual(plain(second(20), second(30)).slice(0, 5));
      } finally {
        db.set('debug', false);
      }
      expect(ledgerQueries.length).toBeGreaterThan(0);
      expect(JSON.stringify(ledgerQueries)).not.toContain('postedAt":{');
    });
  });

  test('only the caller’s own entries; a user without a wallet sees an empty statement', async () => {
    const owner = newUser();
    const other = newUser();
    await givenBalance(owner, 10_00);
    expect((await get(other, '/v1/wallet/transactions')).body.data).toEqual({ entries: [], nextCursor: null });
    const ownerFirst = (await get(owner, '/v1/wallet/transactions')).body.data.entries[0];
    // A cursor names a place, not a wallet: another user's cursor reads the caller's own chain.
    await givenBalance(other, 5_00);
    const page = await get(other, `/v1/wallet/transactions?cursor=999`);
    expect(page.body.data.entries.map((e: Entry) => e.id)).not.toContain(ownerFirst.id);
    expect(page.body.data.entries).toHaveLength(1);
  });

  test.each([
    ['limit=0'],
    ['limit=101'],
    ['limit=ten'],
    ['cursor=abc'],
    ['cursor=1e5'],
    ['type=bogus'],
    ['type=topup_credit,bogus'],
    ['from=yesterday'],
    ['from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z'],
    ['walletId=someone-else'],
  ])('bad input %s: 400 in the error envelope', async (query) => {
    const user = newUser();
    for (const path of ['/v1/wallet/transactions', '/v1/wallet/transactions.csv']) {
      if (path.endsWith('.csv') && (query.startsWith('limit') || query.startsWith('cursor'))) continue;
      const res = await get(user, `${path}?${query}`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, errors: [expect.objectContaining({ code: expect.any(String) })] });
    }
  });

  test('without a token: 401', async () => {
    expect((await call(walletApp().url, 'GET', '/v1/wallet/transactions')).status).toBe(401);
    expect((await call(walletApp().url, 'GET', '/v1/wallet/transactions.csv')).status).toBe(401);
    expect((await call(walletApp().url, 'GET', '/v1/wallet/topups')).status).toBe(401);
    expect((await call(walletApp().url, 'GET', '/v1/wallet/earnings')).status).toBe(401);
  });
});

describe('the chain behind the statement', () => {
  test('ops racing on one wallet each take their own place: balances after are exact, in order', async () => {
    const seller = newUser('seller');
    await openWallet(seller.id, seller.ref, 'MKT');
    const payers = Array.from({ length: 12 }, () => newUser());
    for (const payer of payers) await givenBalance(payer, 10_00);
    await Promise.all(
      payers.map((payer, i) => post(payer, '/v1/wallet/transfers', { toUserId: seller.id, amount: 1_00 + i, currency: 'ETB' })),
    );
    const entries = await wholeStatement(seller, '', 5);
    expect(entries).toHaveLength(12);
    expectRunningBalances(entries, await balancesOf(seller));
    expect(await ledgerMatches(seller)).toBe(true);
  });

  test('entries written before the chain: a new entry starts from their sum; the backfill numbers them below it', async () => {
    const user = newUser();
    const wallet = await openWallet(user.id, user.ref, 'MKT');
    // Two entries of the previous release (no place, no balances after), and the balance they made.
    const old = [
      { _id: `old:${randomUUID()}`, type: 'topup_credit', availableDeltaMinor: 50_00, createdAt: new Date(Date.now() - 60_000) },
      { _id: `old:${randomUUID()}`, type: 'transfer_debit', availableDeltaMinor: -20_00, createdAt: new Date(Date.now() - 30_000) },
    ];
    await LedgerEntryModel.collection.insertMany(
      old.map((e) => ({ ...e, walletId: wallet._id, heldDeltaMinor: 0, reference: 'legacy' })) as never[],
    );
    await Wallet.updateOne({ _id: wallet._id }, { $set: { availableMinor: 30_00 } });
    // Not numbered yet: not in the statement.
    expect((await get(user, '/v1/wallet/transactions')).body.data.entries).toHaveLength(0);

    await applyWalletOp(wallet._id, {
      opId: uniqueName('op'),
      type: 'topup_credit',
      availableDeltaMinor: 5_00,
      heldDeltaMinor: 0,
      reference: 'new',
    });
    const [first] = (await get(user, '/v1/wallet/transactions')).body.data.entries;
    expect(first).toMatchObject({ availableDeltaMinor: 5_00, availableAfterMinor: 35_00, heldAfterMinor: 0 });

    expect(await walletApp().parts.ledger.backfillChain(wallet._id)).toBe(2);
    // Once: the pass over every wallet finds nothing left to number.
    expect(await backfillLedgerChains(walletApp().parts.models, walletApp().parts.ledger)).toBe(0);
    const entries = await wholeStatement(user);
    expect(entries.map((e) => e.availableDeltaMinor)).toEqual([5_00, -20_00, 50_00]);
    expectRunningBalances(entries, await balancesOf(user));
    expect(await ledgerMatches(user)).toBe(true);
  });
});

describe('GET /v1/wallet/earnings', () => {
  test('ahead, settling, available, earned, paid out — per consultation and per month — reconciled with the statement', async () => {
    const buyer = newUser();
    const seller = newUser('seller');
    await givenBalance(buyer, 2000_00);
    await openWallet(seller.id, seller.ref, 'MKT');
    const inAWeek = new Date(Date.now() + 7 * 86_400_000).toISOString();
    const anHourAgo = new Date(Date.now() - 3_600_000).toISOString();
    await hold(buyer, seller, 300_00, uniqueName('bk'), { consultationId: 'con_a', endsAt: inAWeek }); // ahead
    await hold(buyer, seller, 120_00, uniqueName('bk'), { consultationId: 'con_b', endsAt: anHourAgo }); // over, not ended: settling
    const captured = await hold(buyer, seller, 400_00, uniqueName('bk'), { consultationId: 'con_a' });
    await completed(captured, seller);
    await settled(captured);
    const cancelledPart = await hold(buyer, seller, 200_00, uniqueName('bk'), { consultationId: 'con_b' });
    await cancelled(cancelledPart, buyer, seller, 150_00); // 50 to the seller
    await settled(cancelledPart);
    const older = await hold(buyer, seller, 30_00); // a hold that never named its consultation
    await completed(older, seller);
    await settled(older);
    const paidOut = await payout(seller, '100.00');
    for (const action of ['approve', 'process', 'complete']) await post(admin, `/wallets/payout-requests/${paidOut}/${action}`);

    const res = await get(seller, '/v1/wallet/earnings');
    expect(res.status).toBe(200);
    const earnings = res.body.data;
    expect(earnings.totals).toEqual({
      aheadMinor: 300_00,
      settlingMinor: 120_00,
      availableMinor: 400_00 + 50_00 + 30_00 - 100_00,
      earnedMinor: 400_00 + 50_00 + 30_00,
      paidOutMinor: 100_00,
    });
    expect(earnings.byConsultation).toEqual([
      { consultationId: null, aheadMinor: 0, settlingMinor: 0, earnedMinor: 30_00 },
      { consultationId: 'con_a', aheadMinor: 300_00, settlingMinor: 0, earnedMinor: 400_00 },
      { consultationId: 'con_b', aheadMinor: 0, settlingMinor: 120_00, earnedMinor: 50_00 },
    ]);
    const month = new Date().toISOString().slice(0, 7);
    expect(earnings.byMonth).toEqual([{ month, earnedMinor: 480_00, paidOutMinor: 100_00 }]);

    // Reconciled with the statement over the same window: its credits and payouts, its last balance.
    const window = `&from=${encodeURIComponent(earnings.from)}&to=${encodeURIComponent(earnings.to)}`;
    const statement = await wholeStatement(seller, window, 50);
    const sum = (type: string) =>
      statement.filter((e) => e.type === type).reduce((total, e) => total + e.availableDeltaMinor + e.heldDeltaMinor, 0);
    expect(sum('booking_capture')).toBe(earnings.totals.earnedMinor);
    expect(-sum('payout_settle')).toBe(earnings.totals.paidOutMinor);
    expect(statement[0]!.availableAfterMinor).toBe(earnings.totals.availableMinor);
    expect(earnings.byConsultation.reduce((total: number, row: { earnedMinor: number }) => total + row.earnedMinor, 0)).toBe(
      earnings.totals.earnedMinor,
    );

    // A buyer has nothing to earn; a window before any of it shows none of it; bad input is 400.
    expect((await get(buyer, '/v1/wallet/earnings')).body.data.totals).toMatchObject({ aheadMinor: 0, earnedMinor: 0, paidOutMinor: 0 });
    const before = await get(seller, '/v1/wallet/earnings?from=2020-01-01T00:00:00Z&to=2020-12-31T00:00:00Z');
    expect(before.body.data).toMatchObject({ byMonth: [], totals: { earnedMinor: 0, paidOutMinor: 0, aheadMinor: 300_00 } });
    for (const query of ['from=soon', 'from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z', 'sellerId=x'])
      expect((await get(seller, `/v1/wallet/earnings?${query}`)).status).toBe(400);
  });
});

describe('histories: top-ups, payouts, transfers', () => {
  test('each the caller’s own, newest first, paginated and filtered by status', async () => {
    const user = newUser();
    const friend = newUser();
    await openWallet(friend.id, friend.ref, 'MKT');
    const paid = await topUp(user, 300);
    const open = (
      await post(user, `/wallets/users/${user.ref}/topup`, { amount: 20, paymentMethod: 'Chapa', redirectUrl: 'https://shop.example/x' })
    ).body.data.referenceId;
    const topUps = await get(user, '/v1/wallet/topups?limit=1');
    expect(topUps.status).toBe(200);
    expect(topUps.body.pagination).toEqual({ page: 1, limit: 1, total: 2 });
    expect(topUps.body.data.map((t: { referenceId: string }) => t.referenceId)).toEqual([open]);
    const completedOnly = await get(user, '/v1/wallet/topups?status=Completed');
    expect(completedOnly.body.data).toEqual([
      expect.objectContaining({ referenceId: paid, amountMinor: 300_00, currency: 'ETB', status: 'Completed', paymentMethod: 'Chapa' }),
    ]);

    const sent = await post(user, '/v1/wallet/transfers', { toUserId: friend.id, amount: 40_00, currency: 'ETB' });
    const back = await post(friend, '/v1/wallet/transfers', { toUserId: user.id, amount: 15_00, currency: 'ETB' });
    const transfers = await get(user, '/v1/wallet/transfers');
    expect(transfers.body.data.map((t: { id: string; direction: string }) => [t.id, t.direction])).toEqual([
      [back.body.data.id, 'received'],
      [sent.body.data.id, 'sent'],
    ]);
    expect((await get(user, '/v1/wallet/transfers?direction=sent')).body.data.map((t: { id: string }) => t.id)).toEqual([
      sent.body.data.id,
    ]);
    expect((await get(user, '/v1/wallet/transfers?direction=received&status=Completed')).body.pagination.total).toBe(1);
    expect((await get(user, '/v1/wallet/transfers?status=Failed')).body.data).toEqual([]);

    const rejected = await payout(user, '10.00');
    await post(admin, `/wallets/payout-requests/${rejected}/reject`);
    const pending = await payout(user, '20.00');
    const payouts = await get(user, '/v1/wallet/payouts');
    expect(payouts.body.data).toEqual([
      expect.objectContaining({ referenceId: pending, amountMinor: 20_00, status: 'Pending', bankCode: 'CBE', accountNumberLast4: '6789' }),
      expect.objectContaining({ referenceId: rejected, amountMinor: 10_00, status: 'Rejected' }),
    ]);
    expect(JSON.stringify(payouts.body)).not.toContain('1000123456789');
    expect((await get(user, '/v1/wallet/payouts?status=Rejected')).body.data).toHaveLength(1);

    // Nobody else's: the friend sees only the transfers they are party to, and none of the user's top-ups or payouts.
    expect((await get(friend, '/v1/wallet/topups')).body.data).toEqual([]);
    expect((await get(friend, '/v1/wallet/payouts')).body.data).toEqual([]);
    expect((await get(friend, '/v1/wallet/transfers')).body.pagination.total).toBe(2);
  });

  test.each([
    ['/v1/wallet/topups?status=Done'],
    ['/v1/wallet/topups?page=0'],
    ['/v1/wallet/payouts?status=pending'],
    ['/v1/wallet/payouts?limit=500'],
    ['/v1/wallet/transfers?direction=both'],
    ['/v1/wallet/transfers?userId=someone'],
  ])('bad input %s: 400 in the error envelope', async (path) => {
    const res = await get(newUser(), path);
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
  });
});
