import { call, newUser, tokenOf, useCatalog } from './harness';

const catalog = useCatalog();
const ELECTRONICS = 'MKT-CAT-ELECTRON';
const BRAND = 'MKT-PRO-ELBRAND0';
const STORAGE = 'MKT-PRO-ELSTORAG';
const WARRANTY = 'MKT-PRO-ELWARRNT';
const FASHION_SIZE = 'MKT-PRO-FASIZE00';

const product = (overrides: object = {}) => ({
  name: 'Tecno Spark 20',
  description: '<p>A <b>fast</b> phone</p>',
  sellingPrice: 12999.99,
  comparePrice: 14500,
  stock: 12,
  discountCode: 'SPARK10',
  discountPercentage: 10,
  shippingHandler: 'Seller',
  deliveryCost: 150,
  categoryId: ELECTRONICS,
  properties: [
    { propertyId: BRAND, value: 'Tecno' },
    { propertyId: STORAGE, value: '128 GB' },
  ],
  ...overrides,
});

const base = '/physical-products/seller-products';
async function create(seller = newUser(), body: object = product()) {
  return call(catalog(), 'POST', `${base}/`, { token: tokenOf(seller), body });
}

describe('categories', () => {
  test('are listed publicly with typed properties and stable references', async () => {
    const res = await call(catalog(), 'GET', '/physical-products/categories');
    expect(res.status).toBe(200);
    const electronics = res.body.data.find((c: { id: string }) => c.id === ELECTRONICS);
    expect(electronics.name).toBe('Electronics');
    expect(electronics.properties).toContainEqual({ id: BRAND, name: 'Brand', type: 'text' });
    expect(res.body.data.map((c: { name: string }) => c.name)).toEqual(
      expect.arrayContaining(['Fashion', 'Home & Kitchen', 'Beauty & Personal Care', 'Books']),
    );
  });
});

describe('creating a product', () => {
  test('answers the interface fields and stores the rest, names snapshotted, HTML sanitized', async () => {
    const seller = newUser();
    const res = await create(
      seller,
      product({
        description:
          '<p onclick="steal()">Hi<script>alert(1)</script><a href="javascript:x()">x</a><img src="https://cdn.example/p.png" onerror="x"></p>',
      }),
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^MKT-SELL-PROD-[A-Z0-9]{8}$/),
      name: 'Tecno Spark 20',
      sellingPrice: 12999.99,
      stock: 12,
      createdAt: expect.any(String),
    });
    const detail = await call(catalog(), 'GET', `${base}/${res.body.data.id}`);
    expect(detail.body.data).toMatchObject({
      comparePrice: 14500,
      discountPercentage: 10,
      deliveryCost: 150,
      visibility: 'Public',
      sellerId: seller.id,
      categoryId: ELECTRONICS,
    });
    expect(detail.body.data.properties).toEqual([
      { propertyId: BRAND, value: 'Tecno', propertyNameSnapshot: 'Brand' },
      { propertyId: STORAGE, value: '128 GB', propertyNameSnapshot: 'Storage' },
    ]);
    const html = detail.body.data.description;
    expect(html).not.toMatch(/script|onclick|onerror|javascript:/i);
    expect(html).toContain('<img src="https://cdn.example/p.png" />');
  });

  // 400: not what the documented schema allows; 422: schema-valid, but against another field or
  // the category. Either way nothing is created.
  test.each([
    [{ sellingPrice: -1 }, 400, 'sellingPrice'],
    [{ sellingPrice: 10.001 }, 400, 'sellingPrice'],
    [{ comparePrice: 100 }, 422, 'comparePrice'],
    [{ discountPercentage: 101 }, 400, 'discountPercentage'],
    [{ stock: 1.5 }, 400, 'stock'],
    [{ stock: -1 }, 400, 'stock'],
    [{ categoryId: 'MKT-CAT-NOPENOPE' }, 422, 'categoryId'],
    [{ categoryId: 'MKT-CAT-nope' }, 400, 'categoryId'],
    [{ properties: [{ propertyId: FASHION_SIZE, value: 'M' }] }, 422, 'properties.0.propertyId'],
    [{ properties: [{ propertyId: WARRANTY, value: 'long' }] }, 422, 'properties.0.value'],
    [{ properties: [{ propertyId: STORAGE, value: '3 GB' }] }, 422, 'properties.0.value'],
    [{ visibility: 'Secret' }, 400, 'visibility'],
    [{ price: 5 }, 400, 'price'],
    [{ comparePrice: 100, stock: -1 }, 400, 'stock'],
  ])('%j is %i on %s', async (overrides, status, path) => {
    const seller = newUser();
    const res = await create(seller, product(overrides));
    expect(res.status).toBe(status);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect((await call(catalog(), 'GET', `${base}/my`, { token: tokenOf(seller) })).body.data).toEqual([]);
  });

  test('buyers cannot list products; nobody without a token', async () => {
    expect((await create(newUser('buyer'))).status).toBe(403);
    expect((await call(catalog(), 'POST', `${base}/`, { body: product() })).status).toBe(401);
  });
});

describe('visibility', () => {
  const seller = newUser();
  const refs: Record<string, string> = {};
  beforeAll(async () => {
    for (const visibility of ['Public', 'Hidden', 'Private'])
      refs[visibility] = (await create(seller, product({ visibility }))).body.data.id;
  });

  test.each([
    ['Public', 'anonymous', 200],
    ['Public', 'other', 200],
    ['Public', 'owner', 200],
    ['Public', 'admin', 200],
    ['Hidden', 'anonymous', 404],
    ['Hidden', 'other', 404],
    ['Hidden', 'owner', 200],
    ['Hidden', 'admin', 200],
    ['Private', 'anonymous', 404],
    ['Private', 'other', 404],
    ['Private', 'owner', 200],
    ['Private', 'admin', 200],
  ])('a %s product seen by %s → %i', async (visibility, who, status) => {
    const viewer = { anonymous: undefined, other: newUser(), owner: seller, admin: newUser('admin') }[who];
    const res = await call(catalog(), 'GET', `${base}/${refs[visibility]}`, { token: viewer && tokenOf(viewer) });
    expect(res.status).toBe(status);
  });

  test('the owner moves visibility; others are refused; the public listing follows', async () => {
    const ref = (await create(seller)).body.data.id;
    const hide = await call(catalog(), 'PATCH', `${base}/${ref}/visibility`, { token: tokenOf(seller), body: { visibility: 'Hidden' } });
    expect(hide.body.data.visibility).toBe('Hidden');
    expect((await call(catalog(), 'GET', `${base}/${ref}`)).status).toBe(404);
    expect(
      (await call(catalog(), 'PATCH', `${base}/${ref}/visibility`, { token: tokenOf(newUser()), body: { visibility: 'Public' } })).status,
    ).toBe(404);
    const listed = await call(catalog(), 'GET', `${base}/?limit=100`);
    expect(listed.body.data.map((p: { id: string }) => p.id)).not.toContain(ref);
  });
});

describe('the public listing', () => {
  const seller = newUser();
  const tag = `zq${Date.now().toString(36)}`;
  beforeAll(async () => {
    await create(
      seller,
      product({ name: `${tag} cheap`, sellingPrice: 100, comparePrice: undefined, categoryId: 'MKT-CAT-BOOKS000', properties: [] }),
    );
    await create(seller, product({ name: `${tag} middle`, sellingPrice: 500, comparePrice: undefined }));
    await create(seller, product({ name: `${tag} dear`, sellingPrice: 900, comparePrice: undefined }));
    await create(seller, product({ name: `${tag} hidden`, sellingPrice: 500, comparePrice: undefined, visibility: 'Hidden' }));
  });
  const list = (query: string) => call(catalog(), 'GET', `${base}/?q=${tag}&${query}`);

  test('searches, filters by price and category, sorts, and counts the total', async () => {
    const all = await list('sort=price_asc');
    expect(all.body.data.map((p: { name: string }) => p.name)).toEqual([`${tag} cheap`, `${tag} middle`, `${tag} dear`]);
    expect(all.body.pagination).toEqual({ page: 1, limit: 20, total: 3 });
    expect((await list('sort=price_desc')).body.data[0].name).toBe(`${tag} dear`);
    const ranged = await list('minPrice=200&maxPrice=900');
    expect(ranged.body.data).toHaveLength(2);
    expect((await list('categoryId=MKT-CAT-BOOKS000')).body.data.map((p: { name: string }) => p.name)).toEqual([`${tag} cheap`]);
    const paged = await list('sort=price_asc&limit=2&page=2');
    expect(paged.body.data.map((p: { name: string }) => p.name)).toEqual([`${tag} dear`]);
    expect(paged.body.pagination).toEqual({ page: 2, limit: 2, total: 3 });
    expect(paged.body.data[0]).toMatchObject({ sellingPrice: 900, stock: 12, visibility: 'Public' });
  });

  test('a search is text, never a pattern; bad queries are 400', async () => {
    expect((await call(catalog(), 'GET', `${base}/?q=${encodeURIComponent('.*')}`)).body.pagination.total).toBe(0);
    expect((await call(catalog(), 'GET', `${base}/?limit=101`)).status).toBe(400);
    expect((await call(catalog(), 'GET', `${base}/?sort=cheapest`)).status).toBe(400);
    expect((await call(catalog(), 'GET', `${base}/?page=0`)).status).toBe(400);
    // A NUL cannot travel in a database pattern: refused as input, never a 500 (found by fuzzing).
    for (const q of ['%00coffee', 'a%01b', '%20%20']) {
      const res = await call(catalog(), 'GET', `${base}/?q=${q}`);
      expect({ q, status: res.status, path: res.body.errors?.[0]?.path }).toEqual({ q, status: 400, path: 'q' });
    }
  });
});

describe('updating and deleting', () => {
  test('a partial update keeps the rest, checks the merged prices, and only the owner or an admin may', async () => {
    const seller = newUser();
    const ref = (await create(seller)).body.data.id;
    const res = await call(catalog(), 'PATCH', `${base}/${ref}`, {
      token: tokenOf(seller),
      body: { name: 'Spark 20 Pro', stock: 3, discountPercentage: 5 },
    });
    expect(res.body.data).toMatchObject({ name: 'Spark 20 Pro', stock: 3, discountPercentage: 5, sellingPrice: 12999.99 });
    expect((await call(catalog(), 'PATCH', `${base}/${ref}`, { token: tokenOf(seller), body: { sellingPrice: 20000 } })).status).toBe(422);
    expect(
      (await call(catalog(), 'PATCH', `${base}/${ref}`, { token: tokenOf(seller), body: { categoryId: 'MKT-CAT-FASHION0' } })).status,
    ).toBe(422);
    expect((await call(catalog(), 'PATCH', `${base}/${ref}`, { token: tokenOf(newUser()), body: { stock: 0 } })).status).toBe(403);
    expect(
      (await call(catalog(), 'PATCH', `${base}/${ref}`, { token: tokenOf(newUser('admin')), body: { stock: 0 } })).body.data.stock,
    ).toBe(0);
    expect((await call(catalog(), 'PATCH', `${base}/${ref}`, { token: tokenOf(seller), body: {} })).status).toBe(400);
  });

  test('the properties a GET returned may be sent back: the names in them are ignored, the service fills its own', async () => {
    const seller = newUser();
    const ref = (await create(seller)).body.data.id;
    const read = (await call(catalog(), 'GET', `${base}/${ref}`, { token: tokenOf(seller) })).body.data;
    const properties = [...read.properties, { propertyId: WARRANTY, value: 12, propertyNameSnapshot: 'Forged name' }];
    const res = await call(catalog(), 'PATCH', `${base}/${ref}`, { token: tokenOf(seller), body: { properties } });
    expect(res.status).toBe(200);
    expect(res.body.data.properties).toEqual([
      { propertyId: BRAND, value: 'Tecno', propertyNameSnapshot: 'Brand' },
      { propertyId: STORAGE, value: '128 GB', propertyNameSnapshot: 'Storage' },
      { propertyId: WARRANTY, value: 12, propertyNameSnapshot: 'Warranty' },
    ]);
    expect((await call(catalog(), 'GET', `${base}/${ref}`, { token: tokenOf(seller) })).body.data.properties).toEqual(
      res.body.data.properties,
    );
  });

  test('delete is permanent and the owner’s (or an admin’s)', async () => {
    const seller = newUser();
    const ref = (await create(seller)).body.data.id;
    expect((await call(catalog(), 'DELETE', `${base}/${ref}`, { token: tokenOf(newUser()) })).status).toBe(403);
    expect((await call(catalog(), 'DELETE', `${base}/${ref}`, { token: tokenOf(seller) })).body).toEqual({
      success: true,
      message: 'Product deleted',
    });
    expect((await call(catalog(), 'GET', `${base}/${ref}`, { token: tokenOf(seller) })).status).toBe(404);
    expect((await call(catalog(), 'DELETE', `${base}/${ref}`, { token: tokenOf(seller) })).status).toBe(404);
  });
});

describe('drafts', () => {
  const form = JSON.stringify({ step: 2, name: 'Half-written' });

  test('are saved, kept private, listed in /my, edited, and published by a full PATCH', async () => {
    const seller = newUser();
    const draft = await call(catalog(), 'POST', `${base}/draft`, {
      token: tokenOf(seller),
      body: { categoryId: ELECTRONICS, metaData: { form } },
    });
    expect(draft.status).toBe(200);
    const ref = draft.body.data.id;
    expect(draft.body.data).toMatchObject({ isDraft: true, categoryId: ELECTRONICS, metaData: { form } });
    expect((await call(catalog(), 'GET', `${base}/${ref}`)).status).toBe(404);
    expect((await call(catalog(), 'GET', `${base}/${ref}`, { token: tokenOf(newUser()) })).status).toBe(404);

    const edited = await call(catalog(), 'PATCH', `${base}/draft/${ref}`, {
      token: tokenOf(seller),
      body: { metaData: { form: '{"step":3}' } },
    });
    expect(edited.body.data.metaData.form).toBe('{"step":3}');

    const mine = await call(catalog(), 'GET', `${base}/my`, { token: tokenOf(seller) });
    expect(mine.body.data.map((p: { id: string }) => p.id)).toContain(ref);
    expect(mine.body.pagination.total).toBe(1);

    expect((await call(catalog(), 'PATCH', `${base}/${ref}`, { token: tokenOf(seller), body: { name: 'only a name' } })).status).toBe(400);
    const published = await call(catalog(), 'PATCH', `${base}/${ref}`, { token: tokenOf(seller), body: product() });
    expect(published.body.data).toMatchObject({ id: ref, isDraft: false, name: 'Tecno Spark 20', visibility: 'Public' });
    expect((await call(catalog(), 'GET', `${base}/${ref}`)).status).toBe(200);
    expect((await call(catalog(), 'PATCH', `${base}/draft/${ref}`, { token: tokenOf(seller), body: { metaData: { form } } })).status).toBe(
      409,
    );
  });

  test('a form that is not JSON, or an unknown category, is 422', async () => {
    const seller = newUser();
    expect(
      (
        await call(catalog(), 'POST', `${base}/draft`, {
          token: tokenOf(seller),
          body: { categoryId: ELECTRONICS, metaData: { form: '{not json' } },
        })
      ).body.errors[0].path,
    ).toBe('metaData.form');
    expect(
      (
        await call(catalog(), 'POST', `${base}/draft`, {
          token: tokenOf(seller),
          body: { categoryId: 'MKT-CAT-ZZZZZZZZ', metaData: { form } },
        })
      ).status,
    ).toBe(422);
  });
});

describe('routing is case-sensitive and strict', () => {
  test('the product list answers with or without its trailing slash; other spellings are 404', async () => {
    const token = tokenOf(newUser());
    expect((await call(catalog(), 'POST', base, { token, body: product() })).status).toBe(200);
    expect((await call(catalog(), 'GET', base)).status).toBe(200);
    expect((await call(catalog(), 'GET', `${base}/`)).status).toBe(200);
    for (const path of ['/physical-products/SELLER-PRODUCTS/', '/Physical-Products/seller-products/', '/physical-products/Categories']) {
      const res = await call(catalog(), 'GET', path, { token });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false, errors: [{ code: 'not_found' }] });
    }
  });
});

describe('a method a path does not serve', () => {
  test('is 405 with Allow in the envelope, public paths and private ones alike', async () => {
    const seller = newUser();
    const categories = await call(catalog(), 'POST', '/physical-products/categories', { token: tokenOf(seller), body: {} });
    expect(categories.status).toBe(405);
    expect(categories.headers.get('allow')).toBe('GET, HEAD');
    expect(categories.body).toMatchObject({ success: false, errors: [{ code: 'method_not_allowed' }] });
    const shops = await call(catalog(), 'DELETE', '/v1/shops', { token: tokenOf(seller) });
    expect({ status: shops.status, code: shops.body.errors?.[0]?.code }).toEqual({ status: 405, code: 'method_not_allowed' });
  });
});
