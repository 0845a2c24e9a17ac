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

  test('a transfer between two existing wallets: 11 commands', async () => {
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
    // flight (the guarded wallet write), its ledger insert, the commit, the transfer's step; and
    // the recipient's chain head, read once (this process has written nothing on that wallet
    // yet; the sender's it knows from the funding op).
    expect(counter.counts()).toEqual({ find: 2, insert: 3, update: 6 });
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
    expect(counter.counts()).toEqual({ find: 2, insert: 4, update: 7 });
  });

  test('a booking hold: 6 commands', async () => {
    const buyer = newUser();
    const seller = newUser();
    await givenBalance(buyer, 100_00);
    counter.reset();
    const res = await call(app.url, 'POST', '/internal/holds', {
      body: {
        bookingId: uniqueName('bk'),
        buyerId: buyer.id,
        buyerRef: buyer.ref,
        sellerId: seller.id,
        amountMinor: 40_00,
        currency: 'ETB',
      },
      headers: { 'x-internal-token': TOKEN },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('Held');
    // buyer's wallet (a read: it exists), the hold record (upsert), the op taken into flight
    // (the guarded wallet write), its ledger insert (after the chain's head this process knows
    // from the funding op), the commit, Held.
    expect(counter.counts()).toEqual({ find: 1, findAndModify: 2, insert: 1, update: 2 });
    expect(await balancesOf(buyer)).toEqual({ available: 60_00, held: 40_00 });
    expect(await ledgerMatches(buyer)).toBe(true);
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
