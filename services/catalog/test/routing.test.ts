import { call, newUser, tokenOf, useCatalog } from './harness';

// What the routes did before they came from the endpoint table, kept: the guarded prefixes, the
// optional final slashes and the strict `/my` query.
const catalog = useCatalog();

describe('paths no entry answers', () => {
  test.each(['/physical-products/nothing', '/v1/shops/a/b', '/v1/products/a/b'])('%s needs a token before it is a 404', async (path) => {
    expect((await call(catalog(), 'GET', path)).status).toBe(401);
    expect((await call(catalog(), 'GET', path, { token: tokenOf(newUser()) })).status).toBe(404);
  });

  test('a method not served under a guarded prefix needs a token too', async () => {
    expect((await call(catalog(), 'DELETE', '/v1/shops')).status).toBe(401);
    expect((await call(catalog(), 'DELETE', '/v1/shops', { token: tokenOf(newUser()) })).status).toBe(405);
  });
});

describe('roots answer with and without their final slash', () => {
  test.each(['/v1/products', '/v1/products/'])('GET %s', async (path) => {
    expect((await call(catalog(), 'GET', path, { token: tokenOf(newUser()) })).status).toBe(200);
  });

  test('POST /v1/shops/ creates a shop', async () => {
    const body = { name: 'Slash shop', slug: `slash-${Date.now()}`, country: 'ET', category: 'coffee' };
    expect((await call(catalog(), 'POST', '/v1/shops/', { token: tokenOf(newUser()), body })).status).toBe(200);
  });
});

test('/my refuses a query parameter it does not know', async () => {
  const token = tokenOf(newUser());
  expect((await call(catalog(), 'GET', '/physical-products/seller-products/my?page=1', { token })).status).toBe(200);
  const res = await call(catalog(), 'GET', '/physical-products/seller-products/my?colour=red', { token });
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ success: false, errors: [{ path: 'colour' }] });
});
