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
  inner.delete('/secret', (_req, res) => {
    res.json({ success: true, data: 'deleted' });
  });
  inner.patch('/:id/note', (_req, res) => {
    res.json({ success: true, data: 'noted' });
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

describe('a method not served on a served path', () => {
  test('answers 405 in the envelope with the methods that are served in Allow', async () => {
    const res = await call(server.url, 'POST', '/things/secret');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('DELETE, GET, HEAD');
    expect(res.body).toMatchObject({ success: false, errors: [{ path: '', code: 'method_not_allowed' }] });
  });

  test('finds routes with parameters inside mounted routers and on the app itself', async () => {
    const param = await call(server.url, 'GET', '/things/abc/note');
    expect({ status: param.status, allow: param.headers.get('allow') }).toEqual({ status: 405, allow: 'PATCH' });
    const plain = await call(server.url, 'PUT', '/plain');
    expect({ status: plain.status, allow: plain.headers.get('allow') }).toEqual({ status: 405, allow: 'GET, HEAD' });
  });

  test('a path no route serves stays 404, in any method and any other spelling', async () => {
    for (const [method, path] of [
      ['POST', '/nothing'],
      ['POST', '/things/SECRET'],
      ['PUT', '/plain/'],
      ['DELETE', '/things/abc/other'],
    ]) {
      const res = await call(server.url, method, path);
      expect({ method, path, status: res.status, allow: res.headers.get('allow') }).toEqual({ method, path, status: 404, allow: null });
    }
  });
});
