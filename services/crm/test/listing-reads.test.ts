import mongoose from 'mongoose';
import { Migrator } from '@mkt/kit/db';
import { startComponent, stopRuntime, type StartedRuntime } from '@mkt/kit/runtime';
import { sentOn, startWireCounter, testEnv, testIdentity, testServers, uniqueName, type WireCounter } from '@mkt/infra';
import { crmService } from '../src/composition';
import { loadConfig } from '../src/config';
import { LISTING_INDEXES } from '../src/db/models';
import { newRelationshipFields, RelationshipRepository } from '../src/db/relationship.repository';
import { KnownUserRepository } from '../src/db/user.repository';
import type { Listing } from '../src/domain/relationships';
import { crmMigrations } from '../src/migrations';
import { log } from './harness';

const deserialize = (bson: Buffer) => mongoose.mongo.BSON.deserialize(bson);

/**
 * What the CRM's reads of `users` and `relationships` send, seen on the wire, and the indexes
 * that serve them (the test server ignores non-unique indexes and hints: what the service sends
 * and which indexes exist is what a test can pin); the listings' order between equal keys; and
 * the migration that builds those indexes on a database made before.
 */
const identity = testIdentity();
const env = testEnv('crm-listing-reads');
let counter: WireCounter;
let started: StartedRuntime;
let service: ReturnType<typeof crmService>;

beforeAll(async () => {
  counter = await startWireCounter(testServers().mongoUrl, { record: true });
  service = crmService(loadConfig(env.serviceEnv(identity.keys.publicKey, { MONGO_URL: counter.url })), log);
  started = await startComponent(service.definition, env.dbName);
});
afterAll(async () => {
  await stopRuntime(started);
  await mongoose.disconnect();
  await counter.stop();
});

const relationships = () => service.parts.models.relationships.collection;
const users = () => service.parts.models.users.collection;
const indexNamed = async (collection: ReturnType<typeof users>, name: string) =>
  (await collection.indexes()).find((index) => index.name === name);

/** The reads (`find` and the count's `aggregate`) of `collection`, as sent. */
function reads(collection: string) {
  return sentOn(counter.commands(), ['find', 'aggregate'], collection, deserialize);
}

/** Each listing, its owner's side and its index (the sort is the index's keys after the owner's). */
const LISTINGS: Array<{ kind: Listing; owner: 'sellerId' | 'buyerId'; index: keyof typeof LISTING_INDEXES }> = [
  { kind: 'customers', owner: 'sellerId', index: 'sellerCustomers' },
  { kind: 'followers', owner: 'sellerId', index: 'sellerFollowers' },
  { kind: 'favorites', owner: 'sellerId', index: 'sellerFavorites' },
  { kind: 'high-value', owner: 'sellerId', index: 'sellerHighValue' },
  { kind: 'relationships', owner: 'buyerId', index: 'buyerNewest' },
  { kind: 'following', owner: 'buyerId', index: 'buyerFollowing' },
  { kind: 'buyer-customers', owner: 'buyerId', index: 'buyerCustomers' },
];

/** A relationship as the projection stores it, with `fields` over the defaults. */
const stored = (sellerId: string, buyerId: string, fields: object, now = new Date()) => ({
  ...newRelationshipFields(now),
  sellerId,
  buyerId,
  updatedAt: now,
  ...fields,
});

describe('the indexes the reads go through', () => {
  test('each listing index exists as the model declares it: keys in order, partial where declared', async () => {
    for (const [, { key, name, ...options }] of Object.entries(LISTING_INDEXES)) {
      const found = await indexNamed(relationships(), name);
      expect(found).toBeDefined();
      expect(Object.entries(found!.key)).toEqual(Object.entries(key));
      expect(found!.partialFilterExpression).toEqual('partialFilterExpression' in options ? options.partialFilterExpression : undefined);
      expect(found!.unique).toBeUndefined();
    }
  });

  test("a user by reference: the read's `$or` has one clause on `_id` and one on `referenceId`, each an index's key", async () => {
    const user = identity.newUser('seller');
    await users().insertOne({ _id: user.id, referenceId: user.ref, fullName: 'Sara T', role: 'seller' } as never);
    counter.reset();
    expect(await new KnownUserRepository(service.parts.models).find(user.ref)).toMatchObject({ _id: user.id });
    expect(reads('users').map((body) => body.filter as unknown)).toEqual([{ $or: [{ _id: user.ref }, { referenceId: user.ref }] }]);
    // The `referenceId` clause's index (the `_id` one's is `_id_`): not unique, as the projection does not guarantee it.
    const reference = await indexNamed(users(), 'user_reference');
    expect(reference).toMatchObject({ key: { referenceId: 1 } });
    expect(reference!.unique).toBeUndefined();
  });

  test("each listing names its index, sorts by the index's keys after the owner's, and filters the owner and the index's condition only", async () => {
    const repository = new RelationshipRepository(service.parts.models);
    for (const { kind, owner, index } of LISTINGS) {
      const declared = LISTING_INDEXES[index];
      counter.reset();
      await repository.listing(kind, 'someone', { page: 2, limit: 5, minLifetimeValueMinor: 100 });
      const [page, count] = [reads('relationships').find((body) => body.find), reads('relationships').find((body) => body.aggregate)];
      expect(page).toMatchObject({ hint: declared.name, skip: 5, limit: 5 });
      expect(Object.entries(page!.sort as object)).toEqual(Object.entries(declared.key).filter(([field]) => field !== owner));
      expect(Object.keys(declared.key)[0]).toBe(owner);
      // The filter: the owner, and where the index is partial its condition exactly (a subset of it).
      const { [owner]: ownerId, ...rest } = page!.filter as Record<string, unknown>;
      expect(ownerId).toBe('someone');
      if ('partialFilterExpression' in declared) expect(rest).toEqual(declared.partialFilterExpression);
      else expect(Object.keys(rest).every((field) => field in declared.key)).toBe(true);
      // The count goes through the same index.
      expect(count).toMatchObject({ hint: declared.name });
    }
  });

  test("`GET /customers` of each scope names the scope's index and sorts by its keys after the owner's", async () => {
    const repository = new RelationshipRepository(service.parts.models);
    const scopes = [
      { scope: { sellerId: 'someone' }, index: LISTING_INDEXES.sellerNewest },
      { scope: { buyerId: 'someone' }, index: LISTING_INDEXES.buyerNewest },
      { scope: {}, index: LISTING_INDEXES.newest },
    ];
    for (const { scope, index } of scopes) {
      for (const filters of [{}, { status: 'Active', customerType: 'New' }]) {
        counter.reset();
        await repository.ownPage(scope, { page: 1, limit: 5, ...filters });
        const page = reads('relationships').find((body) => body.find);
        expect(page).toMatchObject({ filter: { ...scope, ...filters }, hint: index.name });
        expect(Object.entries(page!.sort as object)).toEqual(Object.entries(index.key).filter(([field]) => !(field in scope)));
        expect(reads('relationships').find((body) => body.aggregate)).toMatchObject({ hint: index.name });
      }
    }
  });
});

describe('equal sort keys: `_id` decides, so a page boundary never repeats or skips one', () => {
  test("high-value, customers and a buyer's listings of relationships equal in their keys: one by one, every one once, `_id` descending", async () => {
    const repository = new RelationshipRepository(service.parts.models);
    const seller = uniqueName('seller');
    const buyer = uniqueName('buyer');
    const same = new Date('2030-01-01T10:00:00.000Z');
    // Stored in ascending `_id` order: an order that followed storage would read them the other way.
    const ids = ['a', 'b', 'c', 'd'].map((suffix) => `${seller}-${suffix}`);
    await relationships().insertMany(
      ids.map((_id, at) =>
        stored(seller, at === 0 ? buyer : uniqueName('buyer'), {
          _id,
          referenceId: `${_id}-ref`,
          lifetimeValueMinor: 50_00,
          totalBookings: 1,
          lastBooking: same,
          createdAt: same,
        }),
      ) as never[],
    );
    // Four more of the buyer's, with four other sellers, equal in every key of theirs.
    const buyerIds = ['a', 'b', 'c', 'd'].map((suffix) => `${buyer}-${suffix}`);
    await relationships().insertMany(
      buyerIds.map((_id) =>
        stored(uniqueName('seller'), buyer, { _id, referenceId: `${_id}-ref`, totalBookings: 1, lastBooking: same, createdAt: same }),
      ) as never[],
    );
    const oneByOne = async (kind: Listing, ownerId: string, count: number) => {
      const found: string[] = [];
      for (let page = 1; page <= count + 1; page += 1) {
        const { items, pagination } = await repository.listing(kind, ownerId, { page, limit: 1, minLifetimeValueMinor: 0 });
        expect(pagination.total).toBe(count);
        found.push(...items.map((item) => item._id));
      }
      return found;
    };
    const descending = (list: string[]) => [...list].sort().reverse();
    expect(await oneByOne('high-value', seller, 4)).toEqual(descending(ids));
    expect(await oneByOne('customers', seller, 4)).toEqual(descending(ids));
    const ofBuyer = descending([...buyerIds, ids[0]!]);
    expect(await oneByOne('relationships', buyer, 5)).toEqual(ofBuyer);
    expect(await oneByOne('buyer-customers', buyer, 5)).toEqual(ofBuyer);
    // `GET /customers` the same way.
    const own: string[] = [];
    for (let page = 1; page <= 5; page += 1)
      own.push(...(await repository.ownPage({ sellerId: seller }, { page, limit: 1 })).items.map((item) => item._id));
    expect(own).toEqual(descending(ids));
  });
});

describe('0004-listing-indexes: a database made before gets the listing indexes and the users’ reference index', () => {
  const migrator = () =>
    new Migrator({ context: { db: service.parts.models.relationships.db, log, models: [], outboxSources: [] }, migrations: crmMigrations });
  const built = async () => [
    ...(await users().indexes()).map((index) => index.name).filter((name) => name === 'user_reference'),
    ...(await relationships().indexes())
      .map((index) => index.name)
      .filter((name) => Object.values(LISTING_INDEXES).some((index) => index.name === name)),
  ];
  const all = ['user_reference', ...Object.values(LISTING_INDEXES).map((index) => index.name)].sort();
  const forget = () => service.parts.models.relationships.db.collection('migrations').deleteOne({ _id: '0004-listing-indexes' } as never);

  test('up builds them (the ones the models declare), a run again changes nothing, down drops only them, up builds them again', async () => {
    expect((await built()).sort()).toEqual(all);
    // Every index of both collections by name, what serves a read of each (its keys in order, its
    // partial filter, unique or not); a rebuilt one is listed after those built since, and without
    // the `background` flag mongoose adds (ignored by the server since 4.2).
    type Index = { name?: string; key: object; partialFilterExpression?: unknown; unique?: boolean };
    const byName = (indexes: Index[]) =>
      indexes
        .map(({ name, key, partialFilterExpression, unique }) => ({ name, key: Object.entries(key), partialFilterExpression, unique }))
        .sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''));
    const before = async () => ({ users: byName(await users().indexes()), relationships: byName(await relationships().indexes()) });
    const declared = await before();

    // As a database of the previous release has them: its indexes built before the models declared these.
    for (const { name } of Object.values(LISTING_INDEXES)) await relationships().dropIndex(name);
    await users().dropIndex('user_reference');
    await forget();
    expect(await built()).toEqual([]);
    expect(await migrator().up()).toEqual(['0004-listing-indexes']);
    expect(await before()).toEqual(declared);

    // Run again (they exist): nothing changes. Down: only these go; up builds them again.
    await forget();
    expect(await migrator().up()).toEqual(['0004-listing-indexes']);
    expect(await before()).toEqual(declared);
    expect(await migrator().down()).toEqual(['0004-listing-indexes']);
    expect(await built()).toEqual([]);
    const kept = (await relationships().indexes()).map((index) => index.name);
    expect(kept).toEqual(expect.arrayContaining(['_id_', 'referenceId_1', 'buyerId_1', 'sellerId_1_buyerId_1']));
    expect(await migrator().up()).toEqual(['0004-listing-indexes']);
    expect(await before()).toEqual(declared);
  });
});
