import pino from 'pino';
import { z } from 'zod';
import { ok } from '@mkt/contracts';
import { createService, handle, mountEndpoints, mountedEndpoints } from '@mkt/kit/http';
import { currentUser } from '../src/http/auth';
import { getMetrics } from '@mkt/kit/metrics';
import { NotFound } from '@mkt/kit/domain';
import { type TableEntry } from '../src/http/endpoints';
import { call, listenOnFreePort, makeKeyPair, signTestToken, type Listening } from '@mkt/infra';

const keys = makeKeyPair();
const log = pino({ level: 'silent' });
const OrderParams = z.object({ id: z.string().min(2) }).strict();
const NoteBody = z.object({ note: z.string().min(1) }).strict();
const PageQuery = z.object({ page: z.coerce.number().int().min(1).default(1) });
const PayForm = z.object({ token: z.string().min(1) }).strict();
const SERVICE_TOKEN = 'internal-secret';

/** A table in the contracts' shape: one service's public and internal entries, one of another service. */
const TABLE: TableEntry[] = [
  { method: 'get', path: '/things/secret', service: 'shop', access: 'bearer' },
  { method: 'delete', path: '/things/secret', service: 'shop', access: 'bearer' },
  { method: 'get', path: '/things/items/', service: 'shop', access: 'public', query: PageQuery },
  { method: 'patch', path: '/things/{id}/note', service: 'shop', access: 'bearer', params: OrderParams, body: NoteBody },
  { method: 'post', path: '/orders/cancel', service: 'shop', access: 'bearer', body: NoteBody },
  { method: 'get', path: '/orders/{id}', service: 'shop', access: 'public', params: OrderParams, errors: { 401: true } },
  { method: 'post', path: '/orders/{id}/approve', service: 'shop', access: 'admin', params: OrderParams, body: NoteBody },
  { method: 'get', path: '/plain', service: 'shop', access: 'public' },
  { method: 'post', path: '/pay/{id}', service: 'shop', access: 'public', params: OrderParams, form: PayForm },
  { method: 'post', path: '/webhooks/provider', service: 'shop', access: 'signature' },
  { method: 'post', path: '/internal/holds', service: 'shop', access: 'service', body: NoteBody },
  { method: 'get', path: '/elsewhere', service: 'other', access: 'public' },
];

const answer = (data: unknown) => (_input: unknown, _req: unknown, res: { json: (body: unknown) => void }) => res.json(ok(data));

function handlers() {
  return {
    'GET /things/secret': handle({}, answer('secret')),
    'DELETE /things/secret': handle({}, answer('deleted')),
    'GET /things/items/': handle({ query: PageQuery }, (input, _req, res) => res.json(ok({ page: input.query.page }))),
    'PATCH /things/{id}/note': handle({ params: OrderParams, body: NoteBody }, (input, _req, res) =>
      res.json(ok({ id: input.params.id, note: input.body.note })),
    ),
    'POST /orders/cancel': handle({ body: NoteBody }, answer('cancelled')),
    'GET /orders/{id}': handle({ params: OrderParams }, (input, req, res) => {
      if (input.params.id === 'missing') throw new NotFound('Order');
      res.json(ok({ order: input.params.id, caller: req.user?.id ?? null }));
    }),
    'POST /orders/{id}/approve': handle({ params: OrderParams, body: NoteBody }, (input, req, res) =>
      res.json(ok({ approved: input.params.id, by: currentUser(req).id })),
    ),
    'GET /plain': handle({}, answer('plain')),
    'POST /pay/{id}': handle({ params: OrderParams, form: PayForm }, (input, _req, res) => res.json(ok({ token: input.form.token }))),
    'POST /webhooks/provider': handle({}, (_input, req, res) =>
      res.json(ok({ raw: Buffer.isBuffer(req.body) ? req.body.toString() : null })),
    ),
    'POST /internal/holds': handle({ body: NoteBody }, answer('held')),
  } as const;
}

function app(options: { guardedPrefixes?: string[] } = {}) {
  return createService({
    name: 'endpoints-test',
    log,
    readiness: [],
    routes: (a) =>
      mountEndpoints(a, {
        service: 'shop',
        tables: [TABLE],
        handlers: handlers(),
        publicKey: keys.publicKey,
        serviceToken: SERVICE_TOKEN,
        ...options,
      }),
  });
}

const buyer = signTestToken(keys.privateKey, { id: 'u-buyer', ref: 'MKT-USR-AAAAAAAA', role: 'buyer' });
const admin = signTestToken(keys.privateKey, { id: 'u-admin', ref: 'MKT-USR-BBBBBBBB', role: 'admin' });

let server: Listening;
let guarded: Listening;
beforeAll(async () => {
  server = await listenOnFreePort(app());
  guarded = await listenOnFreePort(app({ guardedPrefixes: ['/things', '/orders'] }));
});
afterAll(async () => {
  await server.close();
  await guarded.close();
});

describe('mountEndpoints refuses a table and handlers that disagree, before the app answers', () => {
  const mount =
    (changed: Record<string, unknown>, extra: object = {}) =>
    () =>
      createService({
        name: 'endpoints-test',
        log,
        readiness: [],
        routes: (a) =>
          mountEndpoints(a, {
            service: 'shop',
            tables: [TABLE],
            publicKey: keys.publicKey,
            serviceToken: SERVICE_TOKEN,
            ...extra,
            handlers: { ...handlers(), ...changed },
          }),
      });

  test('the full set mounts, and only the service’s own entries', () => {
    const built = mount({})();
    expect(mountedEndpoints(built).map(({ method, path }) => `${method} ${path}`)).toEqual(
      TABLE.filter((entry) => entry.service === 'shop').map(({ method, path }) => `${method} ${path}`),
    );
  });

  test('a handler without an entry', () => {
    expect(mount({ 'GET /things/extra': handle({}, answer('x')) })).toThrow('GET /things/extra has a handler but no entry of shop');
    // Another service's entry is not this service's.
    expect(mount({ 'GET /elsewhere': handle({}, answer('x')) })).toThrow('GET /elsewhere has a handler but no entry of shop');
    // The path as the table writes it: no express spelling, no other case, no missing slash.
    expect(mount({ 'GET /orders/:id': handle({}, answer('x')) })).toThrow('has a handler but no entry');
    expect(mount({ 'GET /things/items': handle({}, answer('x')) })).toThrow('has a handler but no entry');
  });

  test('an entry without a handler', () => {
    expect(mount({ 'POST /orders/cancel': undefined })).toThrow('POST /orders/cancel is an entry of shop without a handler');
  });

  test('a handler that reads a part with another schema than the entry’s, or a part the entry does not name', () => {
    expect(mount({ 'POST /orders/cancel': handle({ body: z.object({ note: z.string() }) }, answer('x')) })).toThrow(
      "POST /orders/cancel: its handler must read body with the entry's schema",
    );
    expect(mount({ 'GET /orders/{id}': handle({}, answer('x')) })).toThrow("its handler must read params with the entry's schema");
    expect(mount({ 'GET /plain': handle({ body: NoteBody }, answer('x')) })).toThrow(
      'its handler reads body, which the entry does not name',
    );
  });

  test('a credential the entries need', () => {
    expect(mount({}, { publicKey: undefined })).toThrow('need publicKey');
    expect(mount({}, { serviceToken: undefined })).toThrow('need serviceToken');
  });

  test('outside createService', () => {
    expect(() => mountEndpoints({} as never, { service: 'shop', tables: [TABLE], handlers: {} })).toThrow(
      'needs an app made by createService',
    );
  });
});

describe('routing from the table is case-sensitive and strict', () => {
  test('a path answers only in the spelling its entry names', async () => {
    expect((await call(server.url, 'GET', '/things/secret', { token: buyer })).body).toMatchObject({ data: 'secret' });
    expect((await call(server.url, 'GET', '/plain')).body).toMatchObject({ data: 'plain' });
    for (const path of ['/things/SECRET', '/THINGS/secret', '/Things/secret', '/things/secret/', '/PLAIN', '/plain/', '/things//secret']) {
      const res = await call(server.url, 'GET', path, { token: buyer });
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.body).toMatchObject({ success: false, errors: [{ code: 'not_found' }] });
    }
  });

  test('a trailing slash the table writes is required', async () => {
    expect((await call(server.url, 'GET', '/things/items/?page=2')).body).toMatchObject({ data: { page: 2 } });
    expect((await call(server.url, 'GET', '/things/items')).status).toBe(404);
  });

  test('optionalTrailingSlash: an entry named there answers in both spellings, and is mounted once', async () => {
    const lenient = createService({
      name: 'endpoints-test',
      log,
      readiness: [],
      routes: (a) =>
        mountEndpoints(a, {
          service: 'shop',
          tables: [TABLE],
          handlers: handlers(),
          publicKey: keys.publicKey,
          serviceToken: SERVICE_TOKEN,
          optionalTrailingSlash: ['GET /things/items/', 'GET /plain'],
        }),
    });
    const other = await listenOnFreePort(lenient);
    try {
      for (const path of ['/things/items/', '/things/items', '/plain', '/plain/'])
        expect({ path, status: (await call(other.url, 'GET', path)).status }).toEqual({ path, status: 200 });
      expect((await call(other.url, 'GET', '/things/secret/', { token: buyer })).status).toBe(404);
      expect(mountedEndpoints(lenient).filter(({ path }) => path.startsWith('/plain') || path.startsWith('/things/items'))).toEqual([
        { service: 'shop', method: 'get', path: '/things/items/' },
        { service: 'shop', method: 'get', path: '/plain' },
      ]);
    } finally {
      await other.close();
    }
    expect(() =>
      mountEndpoints(createService({ name: 'x', log, readiness: [], routes: () => undefined }), {
        service: 'shop',
        tables: [TABLE],
        handlers: handlers(),
        publicKey: keys.publicKey,
        serviceToken: SERVICE_TOKEN,
        optionalTrailingSlash: ['GET /nowhere'],
      }),
    ).toThrow('GET /nowhere has an optional trailing slash but no entry of shop');
  });

  test('parameters are decoded; an undecodable one is 400 in the envelope', async () => {
    expect((await call(server.url, 'GET', '/orders/a%20b')).body).toMatchObject({ data: { order: 'a b' } });
    const bad = await call(server.url, 'GET', '/orders/%E0%A4%A');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ success: false, errors: [{ code: 'invalid' }] });
  });

  test('HEAD is served by the GET entry', async () => {
    const res = await fetch(`${server.url}/plain`, { method: 'HEAD' });
    expect(res.status).toBe(200);
  });
});

describe('a method not served on a served path', () => {
  test('answers 405 in the envelope with the methods that are served in Allow', async () => {
    const res = await call(server.url, 'POST', '/things/secret', { token: buyer });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('DELETE, GET, HEAD');
    expect(res.body).toMatchObject({ success: false, errors: [{ path: '', code: 'method_not_allowed' }] });
  });

  test('finds entries with parameters', async () => {
    const param = await call(server.url, 'GET', '/things/abc/note');
    expect({ status: param.status, allow: param.headers.get('allow') }).toEqual({ status: 405, allow: 'PATCH' });
    const plain = await call(server.url, 'PUT', '/plain');
    expect({ status: plain.status, allow: plain.headers.get('allow') }).toEqual({ status: 405, allow: 'GET, HEAD' });
  });

  test('a literal segment wins: a parameter entry of another method never reads it as an id', async () => {
    expect((await call(server.url, 'POST', '/orders/cancel', { token: buyer, body: { note: 'n' } })).body).toMatchObject({
      data: 'cancelled',
    });
    const got = await call(server.url, 'GET', '/orders/cancel');
    expect({ status: got.status, allow: got.headers.get('allow') }).toEqual({ status: 405, allow: 'POST' });
    expect((await call(server.url, 'GET', '/orders/abc')).body).toMatchObject({ data: { order: 'abc' } });
  });

  test('OPTIONS answers 204 with the Allow of the entries that own the path', async () => {
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

  test('a path no entry serves stays 404, in any method and any other spelling', async () => {
    for (const [method, path] of <Array<[string, string]>>[
      ['POST', '/nothing'],
      ['POST', '/things/SECRET'],
      ['PUT', '/plain/'],
      ['DELETE', '/things/abc/other'],
      ['GET', '/elsewhere'],
    ]) {
      const res = await call(server.url, method, path);
      expect({ method, path, status: res.status, allow: res.headers.get('allow') }).toEqual({ method, path, status: 404, allow: null });
    }
  });
});

describe('access comes from the entry', () => {
  test('bearer: no token or a bad one is 401 before the input is read; a token reaches the handler', async () => {
    expect((await call(server.url, 'PATCH', '/things/abc/note', { body: {} })).status).toBe(401);
    expect((await call(server.url, 'PATCH', '/things/abc/note', { body: {}, token: 'x.y.z' })).status).toBe(401);
    expect((await call(server.url, 'PATCH', '/things/abc/note', { body: {}, token: buyer })).status).toBe(400);
    expect((await call(server.url, 'PATCH', '/things/abc/note', { body: { note: 'hi' }, token: buyer })).body).toMatchObject({
      data: { id: 'abc', note: 'hi' },
    });
  });

  test('admin: another role is 403 before the input is read', async () => {
    expect((await call(server.url, 'POST', '/orders/o1/approve', { body: {} })).status).toBe(401);
    expect((await call(server.url, 'POST', '/orders/o1/approve', { body: {}, token: buyer })).status).toBe(403);
    expect((await call(server.url, 'POST', '/orders/o1/approve', { body: {}, token: admin })).status).toBe(400);
    expect((await call(server.url, 'POST', '/orders/o1/approve', { body: { note: 'ok' }, token: admin })).body).toMatchObject({
      data: { approved: 'o1', by: 'u-admin' },
    });
  });

  test('public, reading a token when one is sent (its errors name 401): a bad token is 401', async () => {
    expect((await call(server.url, 'GET', '/orders/o1')).body).toMatchObject({ data: { caller: null } });
    expect((await call(server.url, 'GET', '/orders/o1', { token: buyer })).body).toMatchObject({ data: { caller: 'u-buyer' } });
    expect((await call(server.url, 'GET', '/orders/o1', { token: 'x.y.z' })).status).toBe(401);
    // A public entry that does not read tokens ignores one.
    expect((await call(server.url, 'GET', '/plain', { token: 'x.y.z' })).status).toBe(200);
  });

  test('service: the shared credential in x-internal-token, never a user token', async () => {
    const body = { note: 'n' };
    expect((await call(server.url, 'POST', '/internal/holds', { body })).status).toBe(401);
    expect((await call(server.url, 'POST', '/internal/holds', { body, token: admin })).status).toBe(401);
    expect((await call(server.url, 'POST', '/internal/holds', { body, headers: { 'x-internal-token': 'wrong' } })).status).toBe(401);
    const res = await call(server.url, 'POST', '/internal/holds', { body, headers: { 'x-internal-token': SERVICE_TOKEN } });
    expect(res.body).toMatchObject({ data: 'held' });
  });

  test('signature: the handler gets the raw body, whatever its type', async () => {
    const raw = '{"a": 1,   "b":"ü"}';
    expect((await call(server.url, 'POST', '/webhooks/provider', { raw })).body).toMatchObject({ data: { raw } });
  });

  test('form: a form post is parsed and validated by the entry’s form schema', async () => {
    const post = (body: string) =>
      call(server.url, 'POST', '/pay/p1', { raw: body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect((await post('token=abc')).body).toMatchObject({ data: { token: 'abc' } });
    expect((await post('other=1')).status).toBe(400);
  });

  test('JSON bodies: malformed is 400, too large is 413, in the envelope', async () => {
    const malformed = await call(server.url, 'POST', '/orders/cancel', { raw: '{"note": ', token: buyer });
    expect(malformed.body).toMatchObject({ success: false, errors: [{ code: 'invalid' }] });
    const big = await call(server.url, 'POST', '/orders/cancel', {
      raw: JSON.stringify({ note: 'x'.repeat(1024 * 1024 + 10) }),
      token: buyer,
    });
    expect(big.status).toBe(413);
  });
});

describe('guarded prefixes: a request under one that no entry answers needs a token first', () => {
  test('an unknown path and a method not served are 401 without a token, 404 and 405 with one', async () => {
    expect((await call(guarded.url, 'GET', '/things/unknown')).status).toBe(401);
    expect((await call(guarded.url, 'GET', '/things/unknown', { token: buyer })).status).toBe(404);
    expect((await call(guarded.url, 'POST', '/things/secret')).status).toBe(401);
    expect((await call(guarded.url, 'POST', '/things/secret', { token: buyer })).status).toBe(405);
    expect((await call(guarded.url, 'GET', '/things//unknown')).status).toBe(401);
    // Matched as the routes are: another spelling of the prefix is nobody's.
    expect((await call(guarded.url, 'GET', '/THINGS/unknown')).status).toBe(404);
  });

  test('a public entry under the prefix answers without a token; paths outside it are not guarded', async () => {
    expect((await call(guarded.url, 'GET', '/things/items/')).status).toBe(200);
    expect((await call(guarded.url, 'GET', '/nothing')).status).toBe(404);
    expect((await call(guarded.url, 'PUT', '/plain')).status).toBe(405);
  });

  test('a method a parameter entry serves is 405 on a literal path before any token; another method needs the token', async () => {
    const got = await call(guarded.url, 'GET', '/orders/cancel');
    expect({ status: got.status, allow: got.headers.get('allow') }).toEqual({ status: 405, allow: 'POST' });
    expect((await call(guarded.url, 'DELETE', '/orders/cancel')).status).toBe(401);
    expect((await call(guarded.url, 'DELETE', '/orders/cancel', { token: buyer })).status).toBe(405);
  });
});

describe('the HTTP duration metric', () => {
  test('an entry’s answers, errors included, are labelled with its route; 404 and 405 are `unmatched`', async () => {
    expect((await call(server.url, 'GET', '/orders/e1')).status).toBe(200);
    expect((await call(server.url, 'GET', '/orders/missing')).status).toBe(404);
    expect((await call(server.url, 'PUT', '/orders/raw-id-5678')).status).toBe(405);
    const { values } = await getMetrics().httpDuration.get();
    const counts = values.filter((v) => v.metricName === 'marketplace_http_request_duration_seconds_count');
    const routesOf = (method: string, status: string) =>
      counts.filter((v) => v.labels.method === method && v.labels.status === status).map((v) => v.labels.route);
    expect(routesOf('GET', '200')).toContain('/orders/:id');
    expect(routesOf('GET', '404')).toContain('/orders/:id');
    expect(routesOf('PUT', '405')).toEqual(['unmatched']);
    expect(counts.filter((v) => String(v.labels.route).includes('raw-id'))).toEqual([]);
  });
});

describe('a middleware of an entry that says next("route")', () => {
  test('ends the entry there: the handler never runs, the app answers 404', async () => {
    let ran = false;
    const skipping = createService({
      name: 'endpoints-test',
      log,
      readiness: [],
      routes: (a) =>
        mountEndpoints(a, {
          service: 'shop',
          tables: [TABLE],
          publicKey: keys.publicKey,
          serviceToken: SERVICE_TOKEN,
          handlers: {
            ...handlers(),
            'GET /plain': handle(
              {},
              (_input, _req, res) => {
                ran = true;
                res.json(ok('plain'));
              },
              { use: [(_req, _res, next) => next('route')] },
            ),
          },
        }),
    });
    const listening = await listenOnFreePort(skipping);
    try {
      const res = await call(listening.url, 'GET', '/plain');
      expect({ status: res.status, ran }).toEqual({ status: 404, ran: false });
    } finally {
      await listening.close();
    }
  });
});
