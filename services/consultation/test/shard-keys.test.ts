import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import mongoose from 'mongoose';
import { call, startWireCounter, testServers, untargetedCommands, type WireCounter } from '@mkt/infra';
import { stopRuntime } from '@mkt/kit/runtime';
import { admin, bookingBody, ensureWallet, givenOffer, newUser, startConsultation, tokenOf } from './harness';

/**
 * The key each hot collection would be sharded by (docs/capacity.md): every command of a
 * booking on one of them must name it in its filter (or carry it, an insert), so a sharded
 * cluster sends it to one shard and sharding needs no change of the queries. The wallet is a
 * stand-in answering every hold with Held (its own commands: services/wallet/test/shard-keys.test.ts).
 */
const SHARD_KEYS: Record<string, string> = {
  bookings: '_id',
  // A place's id starts with its consultation's (keys.ts): the places of one consultation are neighbours.
  slot_places: '_id',
  day_places: '_id',
  sessions: 'consultationId',
  // `consultations` (read by id or reference, with its rule set and pricing) stays unsharded:
  // small and read-mostly, it lives on the primary shard (docs/capacity.md).
};

let counter: WireCounter;
let app: Awaited<ReturnType<typeof startConsultation>>;
let wallet: Server;

beforeAll(async () => {
  counter = await startWireCounter(testServers().mongoUrl, { record: true });
  wallet = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success: true, data: { status: 'Held', settlement: null } }));
    });
  });
  await new Promise<void>((resolve) => wallet.listen(0, '127.0.0.1', resolve));
  app = await startConsultation(`http://127.0.0.1:${(wallet.address() as AddressInfo).port}`, testServers().amqpUrl, {
    MONGO_URL: counter.url,
  });
});
afterAll(async () => {
  await stopRuntime(app.started);
  await new Promise((resolve) => wallet.close(resolve));
  await mongoose.disconnect();
  await counter.stop();
});

const unkeyed = () => untargetedCommands(counter.commands(), SHARD_KEYS, (bson) => mongoose.mongo.BSON.deserialize(bson));

test('a paid booking confirmed, and one refused for its taken slot, name the shard key of every collection they touch', async () => {
  await ensureWallet(admin);
  const offer = await givenOffer(() => app);
  const book = async () => {
    const buyer = newUser();
    await ensureWallet(buyer);
    return call(app.url, 'POST', '/consultations/bookings', { token: tokenOf(buyer), body: bookingBody(offer) });
  };
  counter.reset();
  expect((await book()).body.data.status).toBe('Confirmed');
  expect((await book()).status).toBe(422);
  expect(counter.commands().length).toBeGreaterThan(8);
  expect(unkeyed()).toEqual([]);
});
