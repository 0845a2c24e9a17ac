import type { Server } from 'node:http';
import { randomInt } from 'node:crypto';
import { mongo } from 'mongoose';
import { WindowedCounter } from '@mkt/kit/db';
import { LimitUnchecked } from '../src/domain/errors';
import { SharedLimit } from '../src/http/shared-limit';
import { disconnectDatabase, log, startGateway, startUpstream, urlOf, type Gateway } from './harness';
import { startWireCounter, testServers } from '@mkt/infra';
import { call, makeKeyPair, signTestToken, uniqueName } from './support';

// Two replicas of the gateway on one database, as in production: an attacker who spreads their
// requests over the replicas must get one budget, not one per replica. With counters kept per
// process every test here fails (each replica would grant its own full budget).

let wallet: Server;
let first: Gateway;
let second: Gateway;

const LIMITS = { RATE_LIMIT_IP_PER_MIN: '4', RATE_LIMIT_USER_PER_MIN: '3', RATE_LIMIT_REGISTER_IP_PER_HOUR: '3', TRUST_PROXY: '1' };

beforeAll(async () => {
  wallet = await startUpstream('wallet');
  const keys = makeKeyPair();
  const settings = { ...LIMITS, WALLET_URL: urlOf(wallet) };
  [first, second] = await Promise.all([startGateway(settings, keys), startGateway(settings, keys)]);
});
afterAll(async () => {
  await Promise.all([first.close(), second.close()]);
  await new Promise((resolve) => wallet.close(resolve));
  await disconnectDatabase();
});

/** A client address of its own for each test. */
const newAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
const from = (address: string) => ({ 'x-forwarded-for': address });
/** Alternates between the two replicas, as a round-robin load balancer would. */
const replica = (i: number) => (i % 2 === 0 ? first : second);

/** The limits count per calendar minute: start where the test's few requests fit in one. */
async function awaitRoomInThisMinute(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50));
}

describe('every gateway limit is one budget across replicas', () => {
  test('per IP: RATE_LIMIT_IP_PER_MIN requests spread over two replicas, then 429 from both', async () => {
    await awaitRoomInThisMinute();
    const address = newAddress();
    const answers = [];
    for (let i = 0; i < 6; i += 1) answers.push(await call(replica(i).url, 'GET', '/wallets/banks', { headers: from(address) }));
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 429, 429]);
    expect(answers[1]!.headers.get('ratelimit')).toMatch(/^limit=4, remaining=2, reset=\d+$/);
    expect(answers[1]!.headers.get('ratelimit-policy')).toBe('4;w=60');
    const refused = answers[4]!;
    expect(refused.body).toMatchObject({ success: false, errors: [{ code: 'rate_limited' }] });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('ratelimit')).toMatch(/^limit=4, remaining=0, reset=\d+$/);
    // Another address still has its own budget.
    expect((await call(second.url, 'GET', '/wallets/banks', { headers: from(newAddress()) })).status).toBe(200);
  });

  test('per user: RATE_LIMIT_USER_PER_MIN requests of one verified user over both replicas, from any addresses', async () => {
    await awaitRoomInThisMinute();
    const token = signTestToken(first.keys.privateKey, { id: uniqueName('u'), ref: 'MKT-USR-AAAAAAAA', role: 'buyer' });
    const statuses = [];
    // A new address each time: only the per-user limit can refuse.
    for (let i = 0; i < 5; i += 1)
      statuses.push((await call(replica(i).url, 'GET', '/wallets/banks', { token, headers: from(newAddress()) })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });

  test('registrations per address and hour, over both replicas', async () => {
    const address = newAddress();
    const statuses = [];
    for (let i = 0; i < 5; i += 1) {
      const body = { email: `${uniqueName('reg')}@example.com`, password: 'a long password', fullName: 'R', role: 'buyer' };
      statuses.push((await call(replica(i).url, 'POST', '/v1/auth/register', { body, headers: from(address) })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });

  test('a busy key is counted in leases of 1 % of the limit: never more than the limit across replicas, at most a lease per replica less', async () => {
    await awaitRoomInThisMinute();
    const busy = { ...LIMITS, RATE_LIMIT_IP_PER_MIN: '400', WALLET_URL: urlOf(wallet) };
    const [a, b] = await Promise.all([startGateway(busy, first.keys), startGateway(busy, first.keys)]);
    try {
      const address = newAddress();
      const statuses: number[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < 440) {
            const target = next++ % 2 === 0 ? a : b;
            statuses.push((await call(target.url, 'GET', '/wallets/banks', { headers: from(address) })).status);
          }
        }),
      );
      const granted = statuses.filter((status) => status === 200).length;
      expect(granted).toBeLessThanOrEqual(400);
      expect(granted).toBeGreaterThanOrEqual(400 - 2 * 3);
      expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test('the counters are in the database: a replica started later sees the budget used', async () => {
    await awaitRoomInThisMinute();
    const address = newAddress();
    for (let i = 0; i < 4; i += 1) expect((await call(first.url, 'GET', '/wallets/banks', { headers: from(address) })).status).toBe(200);
    const third = await startGateway({ ...LIMITS, WALLET_URL: urlOf(wallet) }, first.keys);
    try {
      expect((await call(third.url, 'GET', '/wallets/banks', { headers: from(address) })).status).toBe(429);
    } finally {
      await third.close();
    }
  });
});

describe('a lease whose write failed is never granted', () => {
  test("new clients asking in one turn while the counters' bulk write fails: a refusing limit answers 503 to each, an allowing one lets them through, nothing is counted", async () => {
    // The gateway's counters, with their bulk write sent through a client whose connection to
    // the server was cut (a relay in between, stopped): the command fails as a whole, wrapped by
    // the driver in a MongoBulkWriteError without write errors, while reads still reach the server.
    const counters = first.models.RateLimitCounter;
    const relay = await startWireCounter(testServers().mongoUrl);
    const client = new mongo.MongoClient(relay.url, { serverSelectionTimeoutMS: 1_000, directConnection: true });
    await client.connect();
    await relay.stop();
    const broken = client.db(counters.db.name).collection(counters.collection.name);
    const collection = new Proxy(counters.collection, {
      get(target, name) {
        const owner: object = name === 'bulkWrite' ? broken : target;
        const value: unknown = Reflect.get(owner, name, owner);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(owner) : value;
      },
    });
    const model = new Proxy(counters, {
      get: (target, name, receiver) => (name === 'collection' ? collection : Reflect.get(target, name, receiver)),
    });
    const counter = new WindowedCounter(model);
    const names = [uniqueName('register'), uniqueName('ip')] as const;
    const register = new SharedLimit({ name: names[0], limit: 3, window: 'hour', whenUnavailable: 'refuse' }, counter, log, () => true);
    const perIp = new SharedLimit({ name: names[1], limit: 4, window: 'minute', whenUnavailable: 'allow' }, counter, log, () => true);
    const addresses = [newAddress(), newAddress(), newAddress()];
    const refusing = await Promise.all(addresses.map((address) => register.take(address)));
    for (const outcome of refusing) expect(outcome.refused).toBeInstanceOf(LimitUnchecked);
    const allowing = await Promise.all(addresses.map((address) => perIp.take(address)));
    for (const outcome of allowing) expect(outcome.refused).toBeNull();
    expect(await counters.countDocuments({ _id: { $regex: `^(${names.join('|')}):` } })).toBe(0);
    await client.close();
  });
});
