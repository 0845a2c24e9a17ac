import mongoose from 'mongoose';
import { startWireCounter, testServers, uniqueName, untargetedCommands, type WireCounter } from '@mkt/infra';
import { call, disconnectDatabase, givenBalance, newUser, openWallet, startWallet, tokenOf, type WalletApp } from './harness';

const TOKEN = 'a-service-credential-of-at-least-32-characters';

/**
 * The key each hot collection would be sharded by (docs/capacity.md): every command a hot path
 * sends to one of them must name it in its filter (or carry it, an insert), so the router sends
 * it to one shard and sharding needs no change of the queries.
 */
const SHARD_KEYS: Record<string, string> = {
  wallets: '_id',
  ledger_entries: 'walletId',
  transfers: '_id',
  booking_holds: '_id',
};

const { BSON } = mongoose.mongo;

/**
 * The one lookup that does not: a user's wallet found by `userId` (the transfer's two parties
 * in one read, a hold's buyer). On a cluster sharded by the wallet's `_id` it is a read sent to
 * every shard — one per operation; docs/capacity.md says what replaces it then.
 */
const byOwner = /^find on wallets \{"userId":/;

const unkeyed = (counter: WireCounter) =>
  untargetedCommands(counter.commands(), SHARD_KEYS, (bson) => BSON.deserialize(bson)).filter((problem) => !byOwner.test(problem));

describe('every command of a hot path names its shard key', () => {
  let counter: WireCounter;
  let app: WalletApp;

  beforeAll(async () => {
    counter = await startWireCounter(testServers().mongoUrl, { record: true });
    app = await startWallet({ MONGO_URL: counter.url, INTERNAL_API_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await app.close();
    await disconnectDatabase();
    await counter.stop();
  });

  test('a transfer, with and without an Idempotency-Key', async () => {
    const from = newUser();
    const to = newUser();
    await givenBalance(from, 100_00);
    await openWallet(to.id, to.ref, 'MKT');
    counter.reset();
    for (const headers of [{}, { 'idempotency-key': uniqueName('k') }] as Record<string, string>[]) {
      const res = await call(app.url, 'POST', '/v1/wallet/transfers', {
        token: tokenOf(from),
        body: { toUserId: to.id, amount: 1_00, currency: 'ETB' },
        headers,
      });
      expect(res.status).toBe(200);
    }
    expect(counter.commands().length).toBeGreaterThan(10);
    expect(unkeyed(counter)).toEqual([]);
  });

  test('a booking hold', async () => {
    const buyer = newUser();
    const seller = newUser();
    await givenBalance(buyer, 100_00);
    await openWallet(seller.id, seller.ref, 'MKT');
    counter.reset();
    const bookingId = uniqueName('bk');
    const held = await call(app.url, 'POST', '/internal/holds', {
      body: { bookingId, buyerId: buyer.id, buyerRef: buyer.ref, sellerId: seller.id, amountMinor: 40_00, currency: 'ETB' },
      headers: { 'x-internal-token': TOKEN },
    });
    expect(held.status).toBe(200);
    expect(unkeyed(counter)).toEqual([]);
  });
});
