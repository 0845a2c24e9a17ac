import { as, newUser, useCrm } from './harness';

// What the routes did before they came from the endpoint table, kept: everything under
// `/customers` needs a token, and its root answers with and without the final slash.
const crm = useCrm();

test.each(['/customers/a/b/c', '/customers/seller'])('%s needs a token before it is a 404', async (path) => {
  expect((await as(crm, undefined)('GET', path)).status).toBe(401);
  expect((await as(crm, newUser('seller'))('GET', path)).status).toBe(404);
});

test('a method not served needs a token before it is a 405', async () => {
  expect((await as(crm, undefined)('PATCH', '/customers')).status).toBe(401);
});

test.each(['/customers', '/customers/'])('GET %s answers', async (path) => {
  expect((await as(crm, newUser('seller'))('GET', path)).status).toBe(200);
});
