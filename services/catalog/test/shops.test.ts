import { call, newUser, tokenOf, useCatalog } from './harness';

const catalog = useCatalog();
const shop = (slug: string, overrides: object = {}) => ({
  name: 'Abebe Electronics',
  slug,
  country: 'ET',
  category: 'Electronics',
  ...overrides,
});
const v1Product = (sku: string, overrides: object = {}) => ({
  title: 'Coffee 1 kg',
  price: 45000,
  currency: 'ETB',
  sku,
  inventory: 10,
  ...overrides,
});

describe('/v1/shops', () => {
  test('creates a shop owned by the caller, and reads it back', async () => {
    const owner = newUser();
    const slug = `abebe-${Date.now()}`;
    const res = await call(catalog(), 'POST', '/v1/shops', { token: tokenOf(owner), body: shop(slug) });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'Abebe Electronics', slug, country: 'ET', category: 'Electronics', ownerId: owner.id });
    const read = await call(catalog(), 'GET', `/v1/shops/${res.body.data.id}`, { token: tokenOf(newUser('buyer')) });
    expect(read.body.data).toEqual(res.body.data);
    expect((await call(catalog(), 'GET', '/v1/shops/00000000-0000-4000-8000-000000000000', { token: tokenOf(owner) })).status).toBe(404);
  });

  test.each([
    [{ country: 'XX' }, 'country'],
    [{ country: 'et' }, 'country'],
    [{ country: 'ETH' }, 'country'],
    [{ slug: 'Has Spaces' }, 'slug'],
    [{ name: '' }, 'name'],
  ])('%j is 400 on %s', async (overrides, path) => {
    const res = await call(catalog(), 'POST', '/v1/shops', { token: tokenOf(newUser()), body: shop(`s-${Date.now()}`, overrides) });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe(path);
  });

  test('concurrent creates with one slug: exactly one wins, the rest are 409', async () => {
    const slug = `race-${Date.now()}`;
    const results = await Promise.all(
      Array.from({ length: 10 }, () => call(catalog(), 'POST', '/v1/shops', { token: tokenOf(newUser()), body: shop(slug) })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(9);
  });
});

describe('/v1/products', () => {
  test('creates with integer minor units, reads, and lists with pagination', async () => {
    const owner = newUser();
    const res = await call(catalog(), 'POST', '/v1/products', { token: tokenOf(owner), body: v1Product('COF-1KG') });
    expect(res.body.data).toMatchObject({
      title: 'Coffee 1 kg',
      price: 45000,
      currency: 'ETB',
      sku: 'COF-1KG',
      inventory: 10,
      ownerId: owner.id,
    });
    expect((await call(catalog(), 'GET', `/v1/products/${res.body.data.id}`, { token: tokenOf(owner) })).body.data).toEqual(res.body.data);
    const page = await call(catalog(), 'GET', '/v1/products?page=1&limit=1', { token: tokenOf(owner) });
    expect(page.body.data).toHaveLength(1);
    expect(page.body.pagination).toMatchObject({ page: 1, limit: 1 });
    expect(page.body.pagination.total).toBeGreaterThanOrEqual(1);
  });

  test('a SKU is unique per owner (409), not across owners; racing creates: one wins', async () => {
    const owner = newUser();
    expect((await call(catalog(), 'POST', '/v1/products', { token: tokenOf(owner), body: v1Product('SKU-A') })).status).toBe(200);
    expect((await call(catalog(), 'POST', '/v1/products', { token: tokenOf(owner), body: v1Product('SKU-A') })).status).toBe(409);
    expect((await call(catalog(), 'POST', '/v1/products', { token: tokenOf(newUser()), body: v1Product('SKU-A') })).status).toBe(200);
    const racer = newUser();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => call(catalog(), 'POST', '/v1/products', { token: tokenOf(racer), body: v1Product('SKU-RACE') })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
  });

  test.each([[{ price: 10.5 }], [{ price: -1 }], [{ inventory: -1 }], [{ currency: 'birr' }], [{ sku: 'has space' }]])(
    '%j is 400',
    async (overrides) => {
      expect((await call(catalog(), 'POST', '/v1/products', { token: tokenOf(newUser()), body: v1Product('X1', overrides) })).status).toBe(
        400,
      );
    },
  );
});

describe('sellers only', () => {
  test('a buyer cannot create a shop or a /v1 product: 403, nothing created', async () => {
    const buyer = newUser('buyer');
    const slug = `buyer-shop-${Date.now()}`;
    const shopRes = await call(catalog(), 'POST', '/v1/shops', { token: tokenOf(buyer), body: shop(slug) });
    expect(shopRes.status).toBe(403);
    expect(shopRes.body).toMatchObject({ success: false, errors: [{ code: 'forbidden' }] });
    expect((await call(catalog(), 'POST', '/v1/shops', { token: tokenOf(newUser('seller')), body: shop(slug) })).status).toBe(200);
    const productRes = await call(catalog(), 'POST', '/v1/products', { token: tokenOf(buyer), body: v1Product('BUYER-1') });
    expect(productRes.status).toBe(403);
    const listed = await call(catalog(), 'GET', '/v1/products?limit=100', { token: tokenOf(buyer) });
    expect(listed.body.data.filter((p: { ownerId: string }) => p.ownerId === buyer.id)).toEqual([]);
    expect((await call(catalog(), 'POST', '/v1/products', { token: tokenOf(newUser('admin')), body: v1Product('ADMIN-1') })).status).toBe(
      200,
    );
  });

  test('a buyer cannot create a seller product or a draft either', async () => {
    const buyer = tokenOf(newUser('buyer'));
    const draft = await call(catalog(), 'POST', '/physical-products/seller-products/draft', {
      token: buyer,
      body: { categoryId: 'MKT-CAT-GROCERY0', metaData: { form: '{}' } },
    });
    expect(draft.status).toBe(403);
  });
});
