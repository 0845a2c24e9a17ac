import pino from 'pino';
import { createService, serviceRouter } from '@mkt/kit';
import { call, listenOnFreePort, type Listening } from '@mkt/infra';

let server: Listening;
beforeAll(async () => {
  const inner = serviceRouter();
  inner.get('/items{/}', (_req, res) => {
    res.json({ success: true, data: 'items' });
  });
  inner.get('/secret', (_req, res) => {
    res.json({ success: true, data: 'secret' });
  });
  const app = createService({
    name: 'routing-test',
    log: pino({ level: 'silent' }),
    readiness: [],
    routes: (a) => {
      a.use('/things', inner);
      a.get('/plain', (_req, res) => {
        res.json({ success: true, data: 'plain' });
      });
    },
  });
  server = await listenOnFreePort(app);
});
afterAll(() => server.close());

describe('createService routing is case-sensitive and strict', () => {
  test('a path answers only in the spelling its route names', async () => {
    expect((await call(server.url, 'GET', '/things/secret')).body).toMatchObject({ data: 'secret' });
    expect((await call(server.url, 'GET', '/plain')).body).toMatchObject({ data: 'plain' });
    for (const path of ['/things/SECRET', '/THINGS/secret', '/Things/secret', '/things/secret/', '/PLAIN', '/plain/', '/things//secret']) {
      const res = await call(server.url, 'GET', path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.body).toMatchObject({ success: false, errors: [{ code: 'not_found' }] });
    }
  });

  test("'{/}' makes a trailing slash optional where a route wants it", async () => {
    expect((await call(server.url, 'GET', '/things/items')).body).toMatchObject({ data: 'items' });
    expect((await call(server.url, 'GET', '/things/items/')).body).toMatchObject({ data: 'items' });
    expect((await call(server.url, 'GET', '/things/ITEMS')).status).toBe(404);
  });
});
