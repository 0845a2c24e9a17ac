import mongoose from 'mongoose';
import { sentOn, startWireCounter, testServers, type WireCounter } from '@mkt/infra';
import { call, models, newUser, PHONE, tokenOf, useCatalog } from './harness';

const deserialize = (bson: Buffer) => mongoose.mongo.BSON.deserialize(bson);

/**
 * What the listings send, seen on the wire (the test server neither uses nor checks non-unique
 * indexes and hints, a real one does): the public listing sorted by the keys of its partial
 * indexes, each order ending in `_id`; a seller's listing hinted to the index of its order; the
 * `/v1` list counted from the collection's metadata, not by a count of every document. And the
 * indexes those reads need exist, as declared.
 */
let counter: WireCounter;
beforeAll(async () => {
  counter = await startWireCounter(testServers().mongoUrl, { record: true });
});
const catalog = useCatalog(() => ({ MONGO_URL: counter.url }));
afterAll(() => counter.stop());

const base = '/physical-products/seller-products';
const products = () => models().products.collection;

type Body = Record<string, unknown>;
/** The commands named `name` on `collection`, as sent, but the outbox relay's (every 5 s, whenever it lands). */
const sent = (name: string, collection: string): Body[] => sentOn(counter.commands(), [name], collection, deserialize);

const PUBLIC = { isDraft: false, visibility: 'Public' };

describe('the indexes the listings read by', () => {
  test('the public listing’s, partial (public products only), keyed in each order; a seller’s, in theirs; the previous release’s kept', async () => {
    const found = await products().indexes();
    const byName = (name: string) => {
      const index = found.find((each) => each.name === name);
      expect(index).toBeDefined();
      return { key: Object.entries(index!.key), partialFilterExpression: index!.partialFilterExpression as unknown };
    };
    const publicIndex = (...key: Array<[string, number]>) => ({ key, partialFilterExpression: PUBLIC });
    expect(byName('public_newest')).toEqual(publicIndex(['createdAt', -1], ['_id', -1]));
    expect(byName('public_price_asc')).toEqual(publicIndex(['sellingPriceMinor', 1], ['createdAt', -1], ['_id', -1]));
    expect(byName('public_price_desc')).toEqual(publicIndex(['sellingPriceMinor', -1], ['createdAt', -1], ['_id', -1]));
    expect(byName('public_category_newest')).toEqual(publicIndex(['categoryId', 1], ['createdAt', -1], ['_id', -1]));
    expect(byName('public_category_price_asc')).toEqual(
      publicIndex(['categoryId', 1], ['sellingPriceMinor', 1], ['createdAt', -1], ['_id', -1]),
    );
    expect(byName('public_category_price_desc')).toEqual(
      publicIndex(['categoryId', 1], ['sellingPriceMinor', -1], ['createdAt', -1], ['_id', -1]),
    );
    expect(byName('seller_newest')).toEqual({
      key: [
        ['sellerId', 1],
        ['createdAt', -1],
        ['_id', -1],
      ],
      partialFilterExpression: undefined,
    });
    // Kept for a process of the previous release serving beside this one (dropped in a later release).
    expect(found.map((index) => index.name)).toEqual(expect.arrayContaining(['isDraft_1_visibility_1_createdAt_-1', 'sellerId_1']));
  });
});

describe('on the wire', () => {
  test('the public listing filters on the public products and sorts by its index’s keys, ending in _id; no hint (the server chooses)', async () => {
    counter.reset();
    const orders = {
      newest: [
        ['createdAt', -1],
        ['_id', -1],
      ],
      price_asc: [
        ['sellingPriceMinor', 1],
        ['createdAt', -1],
        ['_id', -1],
      ],
      price_desc: [
        ['sellingPriceMinor', -1],
        ['createdAt', -1],
        ['_id', -1],
      ],
    };
    for (const sort of Object.keys(orders)) {
      expect((await call(catalog(), 'GET', `${base}/?sort=${sort}&categoryId=MKT-CAT-BOOKS000&minPrice=1`)).status).toBe(200);
    }
    const finds = sent('find', 'seller_products');
    expect(finds.map((body) => ({ filter: body.filter, hint: body.hint }))).toEqual(
      Object.keys(orders).map(() => ({
        filter: { ...PUBLIC, categoryId: 'MKT-CAT-BOOKS000', sellingPriceMinor: { $gte: 100 } },
        hint: undefined,
      })),
    );
    expect(finds.map((body) => Object.entries(body.sort as Body))).toEqual(Object.values(orders));
  });

  test('a seller’s listing is hinted to the index of its order, sorted by its keys', async () => {
    const seller = newUser();
    counter.reset();
    expect((await call(catalog(), 'GET', `${base}/my?limit=5&page=2`, { token: tokenOf(seller) })).status).toBe(200);
    const finds = sent('find', 'seller_products');
    expect(finds.map(({ filter, hint, skip, limit }) => ({ filter, hint, skip, limit }))).toEqual([
      { filter: { sellerId: seller.id }, hint: 'seller_newest', skip: 5, limit: 5 },
    ]);
    expect(Object.entries(finds[0]!.sort as Body)).toEqual([
      ['createdAt', -1],
      ['_id', -1],
    ]);
  });

  test('the /v1 list’s total is the collection’s count from its metadata: no count of every document on each page', async () => {
    const owner = newUser();
    for (const sku of ['V1-A', 'V1-B']) {
      const body = { title: 'Coffee 1 kg', price: 45000, currency: 'ETB', sku, inventory: 10 };
      expect((await call(catalog(), 'POST', '/v1/products', { token: tokenOf(owner), body })).status).toBe(200);
    }
    counter.reset();
    const page = await call(catalog(), 'GET', '/v1/products?page=1&limit=1', { token: tokenOf(owner) });
    expect(page.status).toBe(200);
    // `countDocuments({})` is an aggregate over the whole collection; the metadata count is `count` without a query.
    expect(sent('aggregate', 'v1_products')).toEqual([]);
    expect(sent('count', 'v1_products').map((body) => body.query ?? {})).toEqual([{}]);
    // The same total as counting every document (the server shut down cleanly).
    expect(page.body.pagination).toEqual({ page: 1, limit: 1, total: await models().v1Products.countDocuments() });
  });
});

describe('products of equal keys (one millisecond, one price) have one order: pages neither repeat nor skip', () => {
  const seller = newUser();
  const tag = `tie${Date.now().toString(36)}`;
  /** Suffixes in the order they are stored: not the `_id` order, nor its reverse. */
  const stored = ['b', 'd', 'a', 'c'];
  const ids = (suffixes: string[]) => suffixes.map((suffix) => `${tag}-${suffix}`);
  /** Newest first, then `_id` descending between equals. */
  const expected = ids(['d', 'c', 'b', 'a']);

  beforeAll(async () => {
    const res = await call(catalog(), 'POST', `${base}/`, { token: tokenOf(seller), body: { ...PHONE, name: `${tag} phone` } });
    expect(res.status).toBe(200);
    const { _id, ...rest } = (await models().products.findById(res.body.data.id).lean())!;
    await products().deleteOne({ _id } as never);
    const createdAt = new Date('2026-01-01T00:00:00.000Z');
    await products().insertMany(ids(stored).map((id) => ({ ...rest, _id: id, createdAt, updatedAt: createdAt })) as never[]);
  });

  /** Every page of `path` with a page size of `limit`, its items' ids in order. */
  async function walk(path: string, limit: number, token?: string): Promise<string[]> {
    const seen: string[] = [];
    for (let page = 1; page <= stored.length; page += 1) {
      const res = await call(
        catalog(),
        'GET',
        `${path}${path.includes('?') ? '&' : '?'}page=${page}&limit=${limit}`,
        token ? { token } : {},
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((item: { id: string }) => item.id));
    }
    return seen;
  }

  test.each(['newest', 'price_asc', 'price_desc'])('the public listing, %s, one or three a page', async (sort) => {
    for (const limit of [1, 3]) expect(await walk(`${base}/?q=${tag}&sort=${sort}`, limit)).toEqual(expected);
  });

  test('a seller’s listing, one or three a page', async () => {
    for (const limit of [1, 3]) expect(await walk(`${base}/my`, limit, tokenOf(seller))).toEqual(expected);
  });
});
