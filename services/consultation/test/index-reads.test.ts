import mongoose from 'mongoose';
import { sentOn, startWireCounter, testServers, type WireCounter } from '@mkt/infra';
import { stopRuntime } from '@mkt/kit/runtime';
import { BookingRepository } from '../src/db/booking.repository';
import { SessionRepository } from '../src/db/session.repository';
import { admin, as, newUser, startConsultation } from './harness';

const deserialize = (bson: Buffer) => mongoose.mongo.BSON.deserialize(bson);

/**
 * The listings and the session sweep read through indexes that serve them, seen on what the
 * service sends and the indexes the database has (the local server ignores non-unique indexes
 * and hints: what a real server does with them is not seen here). The listings are not hinted (a
 * user's `$or` walks two indexes, merged): their sort is each index's last keys, in its order.
 */
let counter: WireCounter;
let app: Awaited<ReturnType<typeof startConsultation>>;

beforeAll(async () => {
  counter = await startWireCounter(testServers().mongoUrl, { record: true });
  app = await startConsultation('http://127.0.0.1:9', testServers().amqpUrl, { MONGO_URL: counter.url });
});
afterAll(async () => {
  await stopRuntime(app.started);
  await mongoose.disconnect();
  await counter.stop();
});

type Sent = { filter: Record<string, unknown>; sort?: Record<string, unknown>; hint?: unknown; limit?: unknown };

/**
 * The finds of `collection` sent since the last reset (filter, sort, hint, limit), but the outbox
 * relay's (every 5 s on each outbox source, whenever it lands).
 */
function findsOf(collection: string): Sent[] {
  return sentOn(counter.commands(), ['find'], collection, deserialize).map((body) => ({
    filter: body.filter as Record<string, unknown>,
    sort: body.sort as Record<string, unknown> | undefined,
    hint: body.hint as unknown,
    limit: body.limit as unknown,
  }));
}

/** The collection's indexes: name → keys in their order (and the partial filter, if any). */
async function indexesOf(collection: 'bookings' | 'sessions') {
  const found = await app.parts.models.Booking.db.collection(collection).indexes();
  return new Map(found.map((index) => [index.name!, { key: Object.entries(index.key), partial: index.partialFilterExpression }]));
}

test('sessions: the sweep’s indexes (status and endsAt; the Expired ones by expiryFinished, partial on the read’s status) and the listing’s, ending with its order; no single-field sellerId index left', async () => {
  const sessions = await indexesOf('sessions');
  expect(sessions.get('status_1_endsAt_1')).toEqual({
    key: [
      ['status', 1],
      ['endsAt', 1],
    ],
    partial: undefined,
  });
  expect(sessions.get('expired_by_finished')).toEqual({ key: [['expiryFinished', 1]], partial: { status: 'Expired' } });
  for (const first of ['sellerId', 'buyerIds', 'status']) {
    expect(sessions.get(`${first}_1_startsAt_-1__id_-1`)).toEqual({
      key: [
        [first, 1],
        ['startsAt', -1],
        ['_id', -1],
      ],
      partial: undefined,
    });
  }
  expect(sessions.get('startsAt_-1__id_-1')).toEqual({
    key: [
      ['startsAt', -1],
      ['_id', -1],
    ],
    partial: undefined,
  });
  expect(sessions.has('sellerId_1')).toBe(false);
});

test('bookings: the listing’s indexes, one per branch of a user’s $or and the statuses’ for an admin, ending with its order; no single-field index of their first keys left', async () => {
  const bookings = await indexesOf('bookings');
  for (const first of ['buyerId', 'sellerId', 'status']) {
    expect(bookings.get(`${first}_1_startsAt_-1__id_-1`)).toEqual({
      key: [
        [first, 1],
        ['startsAt', -1],
        ['_id', -1],
      ],
      partial: undefined,
    });
    expect(bookings.has(`${first}_1`)).toBe(false);
  }
});

test('the session sweep’s reads name their index: the overdue ones of a status by endsAt, the unfinished expiries through the partial index', async () => {
  const repository = new SessionRepository(app.parts.models);
  // A bound of its own, so these reads are told apart from any other of the same shape.
  const endedBefore = new Date('2001-02-03T04:05:06.000Z');
  counter.reset();
  await repository.overdue('Scheduled', endedBefore);
  await repository.overdue('In Progress', endedBefore);
  await repository.unfinishedExpiries();

  const reads = findsOf('sessions');
  expect(
    reads.filter(({ filter }) => filter.status !== 'Expired' && (filter.endsAt as { $lt: Date }).$lt.getTime() === endedBefore.getTime()),
  ).toEqual([
    { filter: { status: 'Scheduled', endsAt: { $lt: endedBefore } }, hint: 'status_1_endsAt_1', limit: 50 },
    { filter: { status: 'In Progress', endsAt: { $lt: endedBefore } }, hint: 'status_1_endsAt_1', limit: 50 },
  ]);
  const expiries = reads.filter(({ filter }) => filter.status === 'Expired');
  expect(expiries.length).toBeGreaterThanOrEqual(1);
  // The filter implies the partial index's filter (its status), so a real server can use it.
  for (const read of expiries) {
    expect(read).toEqual({ filter: { status: 'Expired', expiryFinished: { $ne: true } }, hint: 'expired_by_finished', limit: 50 });
  }
});

test('the listings, as a user and as an admin, are sorted by the last keys of their indexes (after the filter’s key) and not hinted', async () => {
  const buyer = newUser();
  counter.reset();
  for (const user of [buyer, admin]) {
    expect((await as(() => app, user)('GET', '/consultations/bookings')).status).toBe(200);
    expect((await as(() => app, user)('GET', '/consultations/bookings?status=Confirmed')).status).toBe(200);
    expect((await as(() => app, user)('GET', '/consultations/sessions')).status).toBe(200);
    expect((await as(() => app, user)('GET', '/consultations/sessions?status=Scheduled')).status).toBe(200);
  }

  // Each listing index's keys after its first (the filter's), what a page's sort must be to be read in order.
  const lastKeys = (index: { key: Array<[string, unknown]> } | undefined) => index?.key.slice(1);
  const [bookingIndexes, sessionIndexes] = [await indexesOf('bookings'), await indexesOf('sessions')];
  const bookingOrder = lastKeys(bookingIndexes.get('status_1_startsAt_-1__id_-1'));
  const sessionOrder = lastKeys(sessionIndexes.get('status_1_startsAt_-1__id_-1'));
  expect(bookingOrder).toEqual([
    ['startsAt', -1],
    ['_id', -1],
  ]);
  expect(sessionOrder).toEqual(bookingOrder);
  for (const first of ['buyerId', 'sellerId']) expect(lastKeys(bookingIndexes.get(`${first}_1_startsAt_-1__id_-1`))).toEqual(bookingOrder);
  for (const first of ['sellerId', 'buyerIds']) expect(lastKeys(sessionIndexes.get(`${first}_1_startsAt_-1__id_-1`))).toEqual(sessionOrder);
  expect(sessionIndexes.get('startsAt_-1__id_-1')?.key).toEqual(sessionOrder);

  // The listing's reads (sorted by their order; no other read sorts by `startsAt`).
  const bookings = findsOf('bookings').filter(({ sort }) => sort !== undefined && 'startsAt' in sort);
  expect(bookings).toHaveLength(4);
  for (const { sort, hint } of bookings) {
    expect(Object.entries(sort!)).toEqual(bookingOrder);
    expect(hint).toBeUndefined();
  }
  const sessions = findsOf('sessions').filter(({ sort }) => sort !== undefined && 'startsAt' in sort);
  expect(sessions).toHaveLength(4);
  for (const { sort, hint } of sessions) {
    expect(Object.entries(sort!)).toEqual(sessionOrder);
    expect(hint).toBeUndefined();
  }
});

test('an admin’s disputed queue reads the disputed bookings’ own index (partial on a dispute object, the read’s own predicate), hinted; a user’s disputed bookings their listing’s, not hinted', async () => {
  const bookings = await indexesOf('bookings');
  expect(bookings.get('disputed_by_startsAt')).toEqual({
    key: [
      ['startsAt', -1],
      ['_id', -1],
      ['status', 1],
    ],
    partial: { dispute: { $type: 'object' } },
  });
  const buyer = newUser();
  counter.reset();
  expect((await as(() => app, admin)('GET', '/consultations/bookings?disputed=true')).status).toBe(200);
  expect((await as(() => app, buyer)('GET', '/consultations/bookings?disputed=true')).status).toBe(200);
  const reads = findsOf('bookings').filter(({ filter }) => 'dispute' in filter);
  expect(reads).toEqual([
    {
      filter: { status: expect.anything(), dispute: { $type: 'object' } },
      sort: { startsAt: -1, _id: -1 },
      hint: 'disputed_by_startsAt',
      limit: expect.any(Number),
    },
    {
      filter: { $or: [{ buyerId: buyer.id }, { sellerId: buyer.id }], status: expect.anything(), dispute: { $type: 'object' } },
      sort: { startsAt: -1, _id: -1 },
      hint: undefined,
      limit: expect.any(Number),
    },
  ]);
  // Its total is counted through the same index.
  const counts = sentOn(counter.commands(), ['aggregate'], 'bookings', deserialize).filter((body) =>
    JSON.stringify(body.pipeline).includes('"dispute"'),
  );
  expect(counts.map((body) => body.hint)).toEqual(['disputed_by_startsAt', undefined]);
});

test('bookings: a session’s Confirmed ones by session and status; a coupon’s uses by coupon and status, only bookings with a coupon in it', async () => {
  const bookings = await indexesOf('bookings');
  expect(bookings.get('sessionId_1_status_1')).toEqual({
    key: [
      ['sessionId', 1],
      ['status', 1],
    ],
    partial: undefined,
  });
  expect(bookings.get('couponId_1_status_1')).toEqual({
    key: [
      ['couponId', 1],
      ['status', 1],
    ],
    partial: { couponId: { $gt: '' } },
  });
});

test('a coupon’s uses are counted with the coupon as a string equality (what lets a server use the partial index on couponId > ""), by id or by id or reference', async () => {
  const repository = new BookingRepository(app.parts.models);
  counter.reset();
  expect(await repository.couponUsesOf('cpn_x', ['Confirmed'], { key: 'usr_1', self: true })).toBe(0);
  expect(await repository.couponUsesOf('cpn_x', ['Confirmed'], { key: 'USR-1', self: false })).toBe(0);
  const matches = sentOn(counter.commands(), ['aggregate'], 'bookings', deserialize).map(
    (body) => (body.pipeline as Array<{ $match?: Record<string, unknown> }>)[0]!.$match,
  );
  expect(matches).toEqual([
    { couponId: 'cpn_x', status: { $in: ['Confirmed'] }, buyerId: 'usr_1' },
    { couponId: 'cpn_x', status: { $in: ['Confirmed'] }, $or: [{ buyerId: 'USR-1' }, { buyerRef: 'USR-1' }] },
  ]);
});
