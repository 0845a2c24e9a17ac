import { newReference } from '@mkt/contracts/wallet';
import mongoose from 'mongoose';
import { sentOn, startWireCounter, testServers, uniqueName, type WireCounter } from '@mkt/infra';
import { BookingHoldRepository } from '../src/db/booking-hold.repository';
import { PayoutRepository } from '../src/db/payout.repository';
import { TopUpRepository } from '../src/db/topup.repository';
import { TransferRepository } from '../src/db/transfer.repository';
import type { BookingHoldDoc } from '../src/domain/records';
import { disconnectDatabase, openWallet, newUser, startWallet, type WalletApp } from './harness';

const deserialize = (bson: Buffer) => mongoose.mongo.BSON.deserialize(bson);

/**
 * The sweeps' and the pages' reads and the indexes that serve them on a real server (the test
 * server ignores secondary indexes and hints, so what is checked is what the service sends and
 * which indexes exist): the ledger sweep's ops in flight, the resume sweep's Settling and ended
 * holds, the histories and the admin queues in their pages' full order.
 */
let counter: WireCounter;
let app: WalletApp;

beforeAll(async () => {
  counter = await startWireCounter(testServers().mongoUrl, { record: true });
  app = await startWallet({ MONGO_URL: counter.url });
});
afterAll(async () => {
  await app.close();
  await disconnectDatabase();
  await counter.stop();
});

type Model = keyof WalletApp['parts']['models'];
type Key = Record<string, 1 | -1>;

/** The indexes of this change: the model, its keys in order and the options a read relies on. */
const READ_INDEXES: Array<{ model: Model; name: string; key: Key; sparse?: true }> = [
  { model: 'Wallet', name: 'inflight.createdAt_1', key: { 'inflight.createdAt': 1 }, sparse: true },
  { model: 'BookingHold', name: 'status_1_updatedAt_1', key: { status: 1, updatedAt: 1 } },
  { model: 'BookingHold', name: 'disputed_1_createdAt_1__id_1', key: { disputed: 1, createdAt: 1, _id: 1 } },
  { model: 'Payout', name: 'status_1_hold_1_createdAt_1__id_1', key: { status: 1, hold: 1, createdAt: 1, _id: 1 } },
  { model: 'TopUp', name: 'userId_1_createdAt_-1__id_-1', key: { userId: 1, createdAt: -1, _id: -1 } },
  { model: 'Payout', name: 'userId_1_createdAt_-1__id_-1', key: { userId: 1, createdAt: -1, _id: -1 } },
  { model: 'Transfer', name: 'fromUserId_1_createdAt_-1__id_-1', key: { fromUserId: 1, createdAt: -1, _id: -1 } },
  { model: 'Transfer', name: 'toUserId_1_createdAt_-1__id_-1', key: { toUserId: 1, createdAt: -1, _id: -1 } },
];

const indexesOf = (model: Model) => app.parts.models[model].collection.indexes();

/** The finds of `collection` sent since the last reset, as sent, but the outbox relay's (every 5 s, whenever it lands). */
function finds(collection: string): Array<Record<string, unknown>> {
  return sentOn(counter.commands(), ['find'], collection, deserialize);
}

test('each read’s index exists with its keys in order and its options, as the model declares it', async () => {
  for (const { model, name, key, sparse } of READ_INDEXES) {
    const found = (await indexesOf(model)).find((index) => index.name === name);
    expect({ name, key: found && Object.entries(found.key), sparse: found?.sparse }).toEqual({ name, key: Object.entries(key), sparse });
    const declared = app.parts.models[model].schema
      .indexes()
      .filter(([fields]) => JSON.stringify(Object.entries(fields)) === JSON.stringify(Object.entries(key)));
    expect(declared).toHaveLength(1);
    expect(declared[0]![1].sparse).toBe(sparse);
  }
});

test('the ledger sweep’s read of ops in flight is a range of the sparse inflight.createdAt index: only wallets with an op in flight before the cutoff', async () => {
  const now = Date.now();
  const iso = (ago: number) => new Date(now - ago).toISOString();
  const stuck = await openWallet(newUser().id, uniqueName('USR'), 'MKT');
  const fresh = await openWallet(newUser().id, uniqueName('USR'), 'MKT');
  const op = (id: string, createdAt: string) => ({ id, createdAt, token: uniqueName('t') });
  // Raw ops in flight (only their age matters to the read): one old and one new on the first wallet, one new on the second.
  await app.parts.models.Wallet.collection.updateOne({ _id: stuck._id } as never, {
    $set: { inflight: [op('a', iso(60_000)), op('b', iso(1_000))] },
  });
  await app.parts.models.Wallet.collection.updateOne({ _id: fresh._id } as never, { $set: { inflight: [op('c', iso(1_000))] } });
  const cutoff = new Date(now - 10_000);

  counter.reset();
  const found = await app.parts.walletRepository.inflightSince(cutoff);
  expect(found.filter((wallet) => [stuck._id, fresh._id].includes(wallet._id))).toEqual([
    { _id: stuck._id, inflight: [expect.objectContaining({ id: 'a' })] },
  ]);
  await app.parts.models.Wallet.collection.updateMany({ _id: { $in: [stuck._id, fresh._id] } } as never, { $set: { inflight: [] } });

  const [read] = finds('wallets');
  expect(read).toMatchObject({ filter: { 'inflight.createdAt': { $lt: cutoff.toISOString() } }, limit: 200 });
  const index = (await indexesOf('Wallet')).find((each) => each.name === 'inflight.createdAt_1');
  // The filter's only field is the index's only key, and `$lt` never matches a wallet the sparse index leaves out.
  expect(Object.keys(index!.key)).toEqual(Object.keys(read!.filter as object));
  expect(index).toMatchObject({ sparse: true });
});

describe('the resume sweep’s reads of holds', () => {
  const holds = () => app.parts.models.BookingHold.collection;
  const repository = () => new BookingHoldRepository(app.parts.models);
  const now = Date.now();
  const prefix = uniqueName('hold');
  const hold = (suffix: string, set: Partial<BookingHoldDoc>): BookingHoldDoc => ({
    _id: `${prefix}-${suffix}`,
    buyerId: 'buyer',
    buyerWalletId: 'wallet',
    sellerId: 'seller',
    amountMinor: 10_00,
    currency: 'ETB',
    status: 'Settling',
    endsAt: null,
    dueAt: null,
    correlationId: null,
    history: [],
    hold: 'done',
    settlement: null,
    release: 'none',
    credit: 'none',
    fee: 'none',
    settledAt: null,
    pendingEvents: [],
    createdAt: new Date(now - 600_000),
    updatedAt: new Date(now - 600_000),
    ...set,
  });
  const mine = (found: BookingHoldDoc[]) =>
    found
      .map((each) => each._id)
      .filter((id) => id.startsWith(`${prefix}-`))
      .map((id) => id.slice(prefix.length + 1));

  beforeAll(async () => {
    await holds().insertMany([
      hold('settling-newer', { updatedAt: new Date(now - 60_000) }),
      hold('settling-recent', { updatedAt: new Date(now - 1_000) }), // moved after the cutoff: not read
      hold('settling-oldest', { updatedAt: new Date(now - 300_000) }),
      hold('settling-not-due', { updatedAt: new Date(now - 200_000), dueAt: new Date(now + 60_000) }),
      hold('settling-disputed', { updatedAt: new Date(now - 100_000), disputed: true, settlement: { kind: 'capture' } as never }),
      hold('settling-older', { updatedAt: new Date(now - 120_000) }),
      hold('rejected', { status: 'Rejected', hold: 'pending', updatedAt: new Date(now - 60_000) }),
      hold('voided-long-ago', { status: 'Voided', hold: 'pending', updatedAt: new Date(now - 2 * 86_400_000) }),
      hold('voided-held', { status: 'Voided', hold: 'done', updatedAt: new Date(now - 60_000) }),
      hold('pending-abandoned', { status: 'Pending', hold: 'pending', updatedAt: new Date(now - 2 * 3_600_000) }),
      hold('pending-recent', { status: 'Pending', hold: 'pending', updatedAt: new Date(now - 60_000) }),
    ] as never[]);
  });

  test('the Settling read is hinted to the {status, updatedAt} index and sorted by its key after the status: oldest move first, due and not a disputed capture', async () => {
    const cutoff = new Date(now - 30_000);
    counter.reset();
    expect(mine(await repository().settlingDue(cutoff, new Date(now)))).toEqual(['settling-oldest', 'settling-older', 'settling-newer']);

    const [read] = finds('booking_holds');
    expect(read).toMatchObject({ filter: { status: 'Settling', updatedAt: { $lt: cutoff } }, hint: 'status_1_updatedAt_1', limit: 100 });
    const index = (await indexesOf('BookingHold')).find((each) => each.name === 'status_1_updatedAt_1');
    // The status an equality, then the sort's key: the index walks them in order and stops at the limit.
    expect(Object.entries(index!.key)).toEqual([['status', 1], ...Object.entries(read!.sort as object)]);
  });

  test('the ended holds’ read: each branch is a status and an updatedAt range, both keys of an index (not hinted)', async () => {
    const [endedBefore, endedAfter, abandonedBefore] = [new Date(now - 30_000), new Date(now - 86_400_000), new Date(now - 3_600_000)];
    counter.reset();
    expect(mine(await repository().possiblyStray(endedBefore, endedAfter, abandonedBefore)).sort()).toEqual([
      'pending-abandoned',
      'rejected',
    ]);

    const [read] = finds('booking_holds');
    expect(read).not.toHaveProperty('hint');
    const branches = (read!.filter as { $or: Array<Record<string, unknown>> }).$or;
    expect(branches).toEqual([
      { status: { $in: ['Rejected', 'Voided'] }, updatedAt: { $lt: endedBefore, $gt: endedAfter } },
      { status: 'Pending', updatedAt: { $lt: abandonedBefore } },
    ]);
    const keys = (await indexesOf('BookingHold')).map((index) => JSON.stringify(Object.keys(index.key)));
    for (const branch of branches) expect(keys).toContain(JSON.stringify(Object.keys(branch)));
  });
});

test('each history and admin queue page sorts by the keys of an index after its equalities, `_id` last: read in order, never sorted in memory', async () => {
  const { models } = app.parts;
  const page = { page: 2, limit: 5 };
  counter.reset();
  await new TopUpRepository(models).history('u1', { ...page, status: 'Completed' });
  await new PayoutRepository(models).history('u1', page);
  await new TransferRepository(models).history('u1', { ...page, direction: 'sent' });
  await new TransferRepository(models).history('u1', { ...page, direction: 'received' });
  await new TransferRepository(models).history('u1', { ...page, direction: 'all' });
  await new BookingHoldRepository(models).queue('disputed', new Date(), 5, 5);
  await new PayoutRepository(models).queue({ status: 'Pending' }, 5, 5);

  /** The index keys each read walks: its equality fields (each `$or` branch's), then its sort. */
  const walked = (collection: string) =>
    finds(collection)
      .filter((body) => body.sort !== undefined)
      .flatMap((body) => {
        const filter = body.filter as Record<string, unknown> & { $or?: Array<Record<string, unknown>> };
        const sort = Object.entries(body.sort as Key);
        return (filter.$or ?? [filter]).map((branch) => ({ equal: Object.keys(branch), sort }));
      });
  const reads = [
    ...walked('topups').map((read) => ({ ...read, model: 'TopUp' as const, lead: ['userId'] })),
    ...walked('transfers').map((read) => ({
      ...read,
      model: 'Transfer' as const,
      lead: read.equal.filter((field) => field.endsWith('UserId')),
    })),
    ...walked('booking_holds').map((read) => ({ ...read, model: 'BookingHold' as const, lead: ['disputed'] })),
    ...walked('payouts').map((read) => ({
      ...read,
      model: 'Payout' as const,
      lead: read.equal.includes('userId') ? ['userId'] : ['status', 'hold'],
    })),
  ];
  expect(reads).toHaveLength(8);
  for (const { model, lead, sort } of reads) {
    expect(sort.at(-1)?.[0]).toBe('_id');
    const keys = (await indexesOf(model)).map((index) => JSON.stringify(Object.entries(index.key)));
    expect({ model, keys }).toEqual({
      model,
      keys: expect.arrayContaining([JSON.stringify([...lead.map((field) => [field, 1]), ...sort])]),
    });
  }
});

test('migration 0002 walks the legacy wallets in _id order, each batch reading on from where the last ended (not from the start), passes again from the first until one finds none', async () => {
  const prefix = uniqueName('wal_legacy');
  const ids = [`${prefix}_1`, `${prefix}_2`, `${prefix}_3`];
  const at = new Date();
  /** A wallet in the previous release's form (its op ids in `appliedOps`). */
  const legacy = (_id: string) => ({
    _id,
    userId: `usr_${_id}`,
    referenceId: newReference('USR-WAL', 'MKT'),
    userRef: newReference('USR', 'MKT'),
    currency: 'ETB',
    availableMinor: 0,
    heldMinor: 0,
    appliedOps: [],
    createdAt: at,
    updatedAt: at,
  });
  await app.parts.models.Wallet.collection.insertMany(ids.map(legacy) as never);
  const ledger = app.parts.ledger;
  counter.reset();
  expect([await ledger.migrateLegacy(2), await ledger.migrateLegacy(2)]).toEqual([2, 1]);
  // Made by a process of the previous release behind the walk: the next pass, from the first, moves it.
  const behind = `${prefix}_0`;
  await app.parts.models.Wallet.collection.insertOne(legacy(behind) as never);
  expect([await ledger.migrateLegacy(2), await ledger.migrateLegacy(2)]).toEqual([1, 0]);
  const walks = finds('wallets')
    .filter((body) => '$or' in (body.filter as Record<string, unknown>))
    .map(({ filter, sort, limit }) => ({ after: (filter as { _id?: unknown })._id, sort, limit }));
  expect(walks).toEqual([
    { after: undefined, sort: { _id: 1 }, limit: 2 },
    { after: { $gt: ids[1] }, sort: { _id: 1 }, limit: 2 },
    // the pass ends (none after the last), and the next starts from the first
    { after: { $gt: ids[2] }, sort: { _id: 1 }, limit: 2 },
    { after: undefined, sort: { _id: 1 }, limit: 2 },
    // the walk ends at a pass from the first that finds none
    { after: { $gt: behind }, sort: { _id: 1 }, limit: 2 },
    { after: undefined, sort: { _id: 1 }, limit: 2 },
  ]);
  expect(await app.parts.walletRepository.legacyIds()).toEqual([]);
});
