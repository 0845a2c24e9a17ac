import pino from 'pino';
import type { RequestHandler } from 'express';
import { createService, mountRoute } from '@mkt/kit/http';
import { getMetrics } from '@mkt/kit/metrics';
import { NotFound } from '@mkt/kit/domain';
import { call, listenOnFreePort, type Listening } from '@mkt/infra';

let server: Listening;
beforeAll(async () => {
  const answer =
    (data: string): RequestHandler =>
    (_req, res) => {
      res.json({ success: true, data });
    };
  const app = createService({
    name: 'routing-test',
    log: pino({ level: 'silent' }),
    readiness: [],
    routes: (a) => {
      // Routes of the app's own (`mountRoute`), on the matcher the table's entries use.
      mountRoute(a, 'get', '/things/items', answer('items'));
      mountRoute(a, 'get', '/things/items/', answer('items'));
      mountRoute(a, 'get', '/things/secret', answer('secret'));
      mountRoute(a, 'delete', '/things/secret', answer('deleted'));
      mountRoute(a, 'patch', '/things/{id}/note', answer('noted'));
      mountRoute(a, 'post', '/orders/cancel', answer('cancelled'));
      mountRoute(a, 'get', '/orders/{id}', (req, res, next) => {
        if (req.params.id === 'missing') return next(new NotFound('Order'));
        res.json({ success: true, data: `order ${req.params.id}` });
      });
      mountRoute(a, 'get', '/plain', answer('plain'));
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

  test('a trailing slash is optional only where a route names both spellings', async () => {
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

  test('a literal segment wins: a parameter route of another method never reads it as an id', async () => {
    expect((await call(server.url, 'POST', '/orders/cancel')).body).toMatchObject({ data: 'cancelled' });
    const got = await call(server.url, 'GET', '/orders/cancel');
    expect({ status: got.status, allow: got.headers.get('allow') }).toEqual({ status: 405, allow: 'POST' });
    // Other ids still reach the parameter route.
    expect((await call(server.url, 'GET', '/orders/abc')).body).toMatchObject({ data: 'order abc' });
  });

  test('OPTIONS answers 204 with the Allow of the routes that own the path', async () => {
    for (const [path, allow] of [
      ['/orders/cancel', 'POST'],
      ['/things/secret', 'DELETE, GET, HEAD'],
      ['/orders/abc', 'GET, HEAD'],
    ]) {
      const res = await fetch(`${server.url}${path}`, { method: 'OPTIONS' });
      expect({ path, status: res.status, allow: res.headers.get('allow') }).toEqual({ path, status: 204, allow });
    }
    expect((await fetch(`${server.url}/nothing`, { method: 'OPTIONS' })).status).toBe(404);
  });

  test('a path no route serves stays 404, in any method and any other spelling', async () => {
    for (const [method, path] of <Array<[string, string]>>[
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

describe('the HTTP duration metric', () => {
  test("an error answered by the app's error handler keeps its route's full label", async () => {
    expect((await call(server.url, 'GET', '/orders/o1')).status).toBe(200);
    expect((await call(server.url, 'GET', '/orders/missing')).status).toBe(404);
    const { values } = await getMetrics().httpDuration.get();
    const routesOf = (status: string) =>
      values
        .filter(
          (v) =>
            v.metricName === 'marketplace_http_request_duration_seconds_count' && v.labels.method === 'GET' && v.labels.status === status,
        )
        .map((v) => v.labels.route);
    expect(routesOf('200')).toContain('/orders/:id');
    expect(routesOf('404')).toContain('/orders/:id');
    expect(routesOf('404')).not.toContain('/:id');
  });

  test('a path no route serves (404) and a method not served (405) are labelled `unmatched`, never their raw path', async () => {
    expect((await call(server.url, 'GET', '/no-route/raw-id-1234')).status).toBe(404);
    expect((await call(server.url, 'PATCH', '/plain')).status).toBe(405);
    const { values } = await getMetrics().httpDuration.get();
    const counts = values.filter((v) => v.metricName === 'marketplace_http_request_duration_seconds_count');
    expect(counts.find((v) => v.labels.method === 'GET' && v.labels.status === '404' && v.labels.route === 'unmatched')).toBeDefined();
    expect(counts.find((v) => v.labels.method === 'PATCH' && v.labels.status === '405')?.labels.route).toBe('unmatched');
    expect(counts.filter((v) => String(v.labels.route).includes('raw-id'))).toEqual([]);
  });
});
