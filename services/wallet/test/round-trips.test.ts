import mongoose from 'mongoose';
import { startWireCounter, testServers, uniqueName, type WireCounter } from '@mkt/infra';
import {
  balancesOf,
  call,
  disconnectDatabase,
  givenBalance,
  ledgerMatches,
  newUser,
  openWallet,
  startWallet,
  tokenOf,
  TopUp,
  type WalletApp,
} from './harness';

const TOKEN = 'a-service-credential-of-at-least-32-characters';

/**
 * The database commands one request costs, counted on the wire between the wallet and the
 * database and pinned exactly: a change that adds a round trip fails here (README, "Database
 * round trips"). Background work is stopped (the outbox sweep) so only the request is counted.
 */
describe('database round trips per operation', () => {
  let counter: WireCounter;
  let app: WalletApp;
  /** Straight to the database, past the counter: for the test's own waiting. */
  let direct: mongoose.mongo.MongoClient;

  beforeAll(async () => {
    counter = await startWireCounter(testServers().mongoUrl);
    app = await startWallet({ MONGO_URL: counter.url, INTERNAL_API_TOKEN: TOKEN });
    await app.outbox.stop();
    direct = await mongoose.mongo.MongoClient.connect(testServers().mongoUrl);
  });
  afterAll(async () => {
    await direct.close();
    await app.close();
    await disconnectDatabase();
    await counter.stop();
  });

  test('a transfer between two existing wallets: 10 commands', async () => {
    const from = newUser();
    const to = newUser();
    await givenBalance(from, 100_00);
    await openWallet(to.id, to.ref, 'MKT');
    counter.reset();
    const res = await call(app.url, 'POST', '/v1/wallet/transfers', {
      token: tokenOf(from),
      body: { toUserId: to.id, amount: 25_00, currency: 'ETB' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('Completed');
    // both wallets (one read), the transfer; per step (debit, credit): the op taken into
    // flight (the guarded wallet write), its ledger insert, the commit; the transfer's one step
    // record (Completed: Debited is written only when the credit waits); and the recipient's
    // chain head, read once (this process has written nothing on that wallet yet; the sender's
    // it knows from the funding op).
    expect(counter.counts()).toEqual({ find: 2, insert: 3, update: 5 });
    expect(await balancesOf(from)).toEqual({ available: 75_00, held: 0 });
    expect(await balancesOf(to)).toEqual({ available: 25_00, held: 0 });
    expect(await ledgerMatches(from)).toBe(true);
    expect(await ledgerMatches(to)).toBe(true);
  });

  test('a transfer with an Idempotency-Key: 2 more (the key is claimed, then the answer stored)', async () => {
    const from = newUser();
    const to = newUser();
    await givenBalance(from, 100_00);
    await openWallet(to.id, to.ref, 'MKT');
    counter.reset();
    const res = await call(app.url, 'POST', '/v1/wallet/transfers', {
      token: tokenOf(from),
      body: { toUserId: to.id, amount: 1_00, currency: 'ETB' },
      headers: { 'idempotency-key': uniqueName('k') },
    });
    expect(res.status).toBe(200);
    expect(counter.counts()).toEqual({ find: 2, insert: 4, update: 6 });
  });

  /** A hold of 40.00 of `buyer`'s, through the counted process. */
  const holdOf = (buyer: ReturnType<typeof newUser>, amountMinor = 40_00) =>
    call(app.url, 'POST', '/internal/holds', {
      body: { bookingId: uniqueName('bk'), buyerId: buyer.id, buyerRef: buyer.ref, sellerId: newUser().id, amountMinor, currency: 'ETB' },
      headers: { 'x-internal-token': TOKEN },
    });

  test('a booking hold: 5 commands', async () => {
    const buyer = newUser();
    await givenBalance(buyer, 100_00);
    counter.reset();
    const res = await holdOf(buyer);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('Held');
    // the hold record (upsert), the op taken into flight (the guarded wallet write), its ledger
    // insert (after the chain's head this process knows from the funding op), the commit, Held.
    // The buyer's wallet is not read: its id and currency never change, and this process opened
    // it (as the registration event does).
    expect(counter.counts()).toEqual({ findAndModify: 2, insert: 1, update: 2 });
    expect(await balancesOf(buyer)).toEqual({ available: 60_00, held: 40_00 });
    expect(await ledgerMatches(buyer)).toBe(true);
  });

  test('the first hold of a buyer another process opened and funded: 7 (its wallet and its chain head read once)', async () => {
    const buyer = newUser();
    const other = await startWallet();
    try {
      await other.outbox.stop();
      await givenBalance(buyer, 100_00); // through the other process
    } finally {
      await other.close();
    }
    counter.reset();
    expect((await holdOf(buyer, 10_00)).status).toBe(200);
    expect(counter.counts()).toEqual({ find: 2, findAndModify: 2, insert: 1, update: 2 });
    counter.reset();
    expect((await holdOf(buyer, 30_00)).status).toBe(200);
    expect(counter.counts()).toEqual({ findAndModify: 2, insert: 1, update: 2 });
    expect(await balancesOf(buyer)).toEqual({ available: 60_00, held: 40_00 });
    expect(await ledgerMatches(buyer)).toBe(true);
  });

  test('32 transfers at once to one payee: its ledger inserts go together, no place lost', async () => {
    const payee = newUser('seller');
    await openWallet(payee.id, payee.ref, 'MKT');
    const payers = Array.from({ length: 32 }, () => newUser());
    for (const payer of payers) await givenBalance(payer, 10_00);
    // This process knows the payee's chain head (one transfer first).
    const send = (payer: (typeof payers)[number]) =>
      call(app.url, 'POST', '/v1/wallet/transfers', {
        token: tokenOf(payer),
        body: { toUserId: payee.id, amount: 1_00, currency: 'ETB' },
      });
    expect((await send(payers[0]!)).status).toBe(200);
    counter.reset();
    const answers = await Promise.all(payers.map(send));
    expect(answers.map((res) => res.status)).toEqual(payers.map(() => 200));
    const counts = counter.counts();
    // Per transfer: both wallets (one read), the transfer's insert, its debit's ledger insert;
    // the payee's credits' inserts go in batches (those that waited for the one on the wire), and
    // no insert loses its place to another of this process: no read of a taken place.
    expect(counts.find).toBe(32);
    expect(counts.insert).toBeGreaterThanOrEqual(2 * 32 + 1);
    expect(counts.insert).toBeLessThan(3 * 32);
    expect(counts.update).toBe(5 * 32);
    expect(await balancesOf(payee)).toEqual({ available: 33_00, held: 0 });
    expect(await ledgerMatches(payee)).toBe(true);
  });

  test('a top-up completion (checkout or webhook) with its event published: 8 commands', async () => {
    const user = newUser();
    const created = await call(app.url, 'POST', `/wallets/users/${user.ref}/topup`, {
      token: tokenOf(user),
      body: { amount: 20, paymentMethod: 'Chapa', redirectUrl: 'https://shop.example/after' },
    });
    expect(created.status).toBe(200);
    const topUp = (await TopUp.findOne({ referenceId: created.body.data.referenceId }).lean())!;
    counter.reset();
    await app.parts.topUps.complete(topUp._id, 'checkout');
    // The event's publication runs beside the answer: waited for here, past the counter.
    const topUps = direct.db(app.parts.models.Wallet.db.db!.databaseName).collection('topups');
    for (let tries = 0; (await topUps.countDocuments({ _id: topUp._id as never, 'pendingEvents.0': { $exists: true } })) > 0; tries++) {
      if (tries > 200) throw new Error('the top-up event was never published');
      await new Promise((resolve) => setImmediate(resolve));
    }
    // read the top-up, Completed + event (one write), the credit step (the op taken into
    // flight, the chain's head (the wallet's first op: read once), its ledger insert, the commit,
    // the top-up's step), the outbox: pull the events the write answered (the repository hands
    // its written document to the relay, which publishes them without reading them again).
    expect(counter.counts()).toEqual({ find: 2, findAndModify: 1, insert: 1, update: 4 });
    expect(await balancesOf(user)).toEqual({ available: 20_00, held: 0 });
    expect(await ledgerMatches(user)).toBe(true);
  });
});
