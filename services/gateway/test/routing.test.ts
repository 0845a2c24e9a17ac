import http, { type Server } from 'node:http';
import { disconnectDatabase, startGateway, startUpstream, urlOf, type Gateway } from './harness';
import { call, freePort, signTestToken } from './support';

const names = ['wallet', 'catalog', 'crm', 'consultation', 'review'] as const;
let upstreams: Server[];
let targets: Record<string, string>;
let gateway: Gateway;
let limited: Gateway;
let downGateway: Gateway;

beforeAll(async () => {
  upstreams = await Promise.all(names.map((name) => startUpstream(name)));
  targets = Object.fromEntries(names.map((name, i) => [`${name.toUpperCase()}_URL`, urlOf(upstreams[i]!)]));
  gateway = await startGateway({ ...targets, UPSTREAM_TIMEOUT_MS: '500', RATE_LIMIT_IP_PER_MIN: '0', RATE_LIMIT_USER_PER_MIN: '0' });
  limited = await startGateway({ ...targets, RATE_LIMIT_IP_PER_MIN: '3', RATE_LIMIT_USER_PER_MIN: '0' });
  downGateway = await startGateway({ ...targets, WALLET_URL: `http://127.0.0.1:${await freePort()}` });
});
afterAll(async () => {
  await Promise.all([gateway.close(), limited.close(), downGateway.close()]);
  await Promise.all(upstreams.map((server) => new Promise((resolve) => server.close(resolve))));
  await disconnectDatabase();
});

describe('routing', () => {
  test.each([
    ['/wallets/banks', 'wallet'],
    ['/v1/wallet', 'wallet'],
    ['/v1/wallet/transfers', 'wallet'],
    ['/physical-products/seller-products/', 'catalog'],
    ['/v1/products?page=2', 'catalog'],
    ['/v1/shops/abc', 'catalog'],
    ['/customers', 'crm'],
    ['/customers/seller/1/analytics', 'crm'],
    ['/consultations/sessions', 'consultation'],
    ['/reviews/by-entity?entityType=x', 'review'],
  ])('%s reaches %s with its path and query untouched', async (path, service) => {
    const res = await call(gateway.url, 'GET', path);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ service, url: path });
  });

  test('bodies stream through unparsed, byte for byte', async () => {
    const raw = '{"amount": 10.50,   "notes":"ü"}';
    const res = await call(gateway.url, 'POST', '/wallets/users/x/topup', { raw });
    expect(res.body.data.body).toBe(raw);
  });

  test('the Authorization header is forwarded unchanged', async () => {
    const res = await call(gateway.url, 'GET', '/customers', { headers: { authorization: 'Bearer abc.def.ghi' } });
    expect(res.body.data.headers.authorization).toBe('Bearer abc.def.ghi');
  });

  test('an unknown route is 404 in the envelope', async () => {
    for (const path of ['/nope', '/walletsx', '/v1/unknown']) {
      const res = await call(gateway.url, 'GET', path);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false, errors: [{ code: 'not_found' }] });
    }
  });

  test('a method an own route does not serve is 405 with Allow, in the envelope', async () => {
    const res = await call(gateway.url, 'GET', '/v1/auth/login');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(res.body).toMatchObject({ success: false, errors: [{ code: 'method_not_allowed' }] });
  });

  test('the request id is kept, sent upstream and echoed back; one is made when missing', async () => {
    const res = await call(gateway.url, 'GET', '/reviews/by-entity', { headers: { 'x-request-id': 'client-req-42' } });
    expect(res.body.data.headers['x-request-id']).toBe('client-req-42');
    expect(res.headers.get('x-request-id')).toBe('client-req-42');
    const made = await call(gateway.url, 'GET', '/reviews/by-entity');
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(made.body.data.headers['x-request-id']).toBe(made.headers.get('x-request-id'));
  });

  test('a spoofed x-user-* header never reaches an upstream', async () => {
    const res = await call(gateway.url, 'GET', '/wallets/banks', { headers: { 'x-user-id': 'admin', 'x-user-role': 'admin' } });
    expect(Object.keys(res.body.data.headers).filter((name) => name.startsWith('x-user-'))).toEqual([]);
  });
});

describe('failures answered by the gateway in the envelope', () => {
  test('malformed JSON is 400', async () => {
    const res = await call(gateway.url, 'POST', '/v1/auth/login', { raw: '{"email": ' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, errors: [{ code: 'invalid' }] });
  });

  test('an oversized body is 413, for the gateway and for proxied routes', async () => {
    const raw = JSON.stringify({ notes: 'x'.repeat(1024 * 1024 + 10) });
    for (const path of ['/v1/auth/login', '/wallets/users/x/topup']) {
      const res = await call(gateway.url, 'POST', path, { raw });
      expect(res.status).toBe(413);
      expect(res.body).toMatchObject({ success: false, errors: [{ code: 'payload_too_large' }] });
    }
  });

  test('an upstream that is down is 503', async () => {
    const res = await call(downGateway.url, 'GET', '/wallets/banks');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ success: false, errors: [{ code: 'unavailable' }] });
  });

  test('an upstream that hangs up is 502', async () => {
    const res = await call(gateway.url, 'GET', '/customers/__broken');
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ success: false, errors: [{ code: 'bad_gateway' }] });
  });

  test('a client that goes away cancels its request to the upstream', async () => {
    let upstreamSawClose!: () => void;
    const closed = new Promise<void>((resolve) => (upstreamSawClose = resolve));
    const hanging = http.createServer((req) => req.on('close', () => upstreamSawClose()));
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const patient = await startGateway({ REVIEW_URL: urlOf(hanging), UPSTREAM_TIMEOUT_MS: '60000', RATE_LIMIT_IP_PER_MIN: '0' });
    try {
      const abort = new AbortController();
      const pending = fetch(`${patient.url}/reviews/by-entity`, { signal: abort.signal }).catch((err: Error) => err.name);
      setTimeout(() => abort.abort(), 200);
      expect(await pending).toBe('AbortError');
      await closed;
    } finally {
      await patient.close();
      hanging.closeAllConnections();
      await new Promise((resolve) => hanging.close(resolve));
    }
  });

  test('an upstream slower than the route timeout is 504', async () => {
    const res = await call(gateway.url, 'GET', '/consultations/__slow');
    expect(res.status).toBe(504);
    expect(res.body).toMatchObject({ success: false, errors: [{ code: 'gateway_timeout' }] });
  });

  test('over the per-IP limit is 429 with Retry-After, in the envelope', async () => {
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 5; i += 1) {
      last = await call(limited.url, 'GET', '/wallets/banks');
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last!.body).toMatchObject({ success: false, errors: [{ code: 'rate_limited' }] });
  });

  test('the per-user limit counts verified users, not forged claims', async () => {
    const perUser = await startGateway({ RATE_LIMIT_IP_PER_MIN: '0', RATE_LIMIT_USER_PER_MIN: '2', WALLET_URL: urlOf(upstreams[0]!) });
    try {
      const token = signTestToken(perUser.keys.privateKey, { id: 'u1', ref: 'MKT-USR-AAAAAAAA', role: 'buyer' });
      const statuses = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await call(perUser.url, 'GET', '/wallets/banks', { token })).status);
      expect(statuses).toEqual([200, 200, 429]);
      const other = signTestToken(perUser.keys.privateKey, { id: 'u2', ref: 'MKT-USR-BBBBBBBB', role: 'buyer' });
      expect((await call(perUser.url, 'GET', '/wallets/banks', { token: other })).status).toBe(200);
    } finally {
      await perUser.close();
    }
  });

  test('health and readiness (metrics have their own port: edge-hardening.test.ts)', async () => {
    expect((await call(gateway.url, 'GET', '/healthz')).body).toMatchObject({ success: true, data: { status: 'ok' } });
    expect((await call(gateway.url, 'GET', '/readyz')).status).toBe(200);
  });

  test('proxied answers carry the security headers; an upstream header of the same name wins', async () => {
    const res = await fetch(`${gateway.url}/wallets/banks`);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('strict-transport-security')).toMatch(/max-age=/);
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    const own = await fetch(`${gateway.url}/wallets/__csp`);
    expect(own.headers.get('content-security-policy')).toBe("default-src 'none'");
    expect(own.headers.get('x-frame-options')).toBe('SAMEORIGIN');
  });

  test("a service's repeated headers reach the client each as sent, with the gateway's own beside them", async () => {
    const res = await fetch(`${gateway.url}/customers?__cookies`);
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-type')).toBe('application/json');
  });

  test('a CORS preflight of a proxied path is answered by the gateway', async () => {
    const res = await fetch(`${gateway.url}/wallets/banks`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  test('X-Forwarded-* are added, the client connection headers are not passed on', async () => {
    const res = await call(gateway.url, 'GET', '/customers', {
      headers: { 'x-forwarded-for': '198.51.100.7', forwarded: 'for=198.51.100.8;host=evil.example', connection: 'close' },
    });
    const seen = res.body.data.headers;
    // No proxy hop trusted: the client's own X-Forwarded-For and Forwarded are not what the service sees.
    expect(seen['x-forwarded-for']).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    expect(seen['x-forwarded-for']).toBe(seen['x-client-address']);
    expect(seen.forwarded).toBeUndefined();
    expect(seen['x-forwarded-proto']).toBe('http');
    expect(seen['x-forwarded-host']).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(seen.connection).not.toBe('close');
  });

  test("X-Forwarded-Host/-Proto/-Port are the gateway's own, never what the client wrote", async () => {
    const res = await call(gateway.url, 'GET', '/customers', {
      headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', 'x-forwarded-port': '443' },
    });
    const seen = res.body.data.headers;
    const { host, port } = new URL(gateway.url);
    expect(seen['x-forwarded-host']).toBe(host);
    expect(seen['x-forwarded-proto']).toBe('http');
    expect(seen['x-forwarded-port']).toBe(port);
  });

  test('with TRUST_PROXY hops, X-Forwarded-For upstream is the address those hops saw, alone, -Proto/-Port theirs when well-formed, -Host the received Host', async () => {
    const behindProxy = await startGateway({ ...targets, TRUST_PROXY: '1' });
    try {
      const res = await call(behindProxy.url, 'GET', '/customers', { headers: { 'x-forwarded-for': '203.0.113.9, 198.51.100.7' } });
      expect(res.body.data.headers['x-forwarded-for']).toBe('198.51.100.7');
      expect(res.body.data.headers['x-client-address']).toBe('198.51.100.7');
      // The trusted hop's X-Forwarded-Proto/-Port (the last entry of each), not the client's
      // entries before it; X-Forwarded-Host always the Host the gateway received (a hop that
      // writes none would leave the client's only entry as "the hop's").
      const { host, port } = new URL(behindProxy.url);
      const hopped = await call(behindProxy.url, 'GET', '/customers', {
        headers: { 'x-forwarded-host': 'evil.example, shop.example', 'x-forwarded-proto': 'http, https', 'x-forwarded-port': '8443, 443' },
      });
      expect(hopped.body.data.headers).toMatchObject({
        'x-forwarded-host': host,
        'x-forwarded-proto': 'https',
        'x-forwarded-port': '443',
      });
      // What is not a protocol or a port is not taken from anyone.
      const malformed = await call(behindProxy.url, 'GET', '/customers', {
        headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'javascript', 'x-forwarded-port': '99999' },
      });
      expect(malformed.body.data.headers).toMatchObject({
        'x-forwarded-host': host,
        'x-forwarded-proto': 'http',
        'x-forwarded-port': port,
      });
      expect((await call(behindProxy.url, 'GET', '/customers')).body.data.headers).toMatchObject({
        'x-forwarded-host': host,
        'x-forwarded-proto': 'http',
        'x-forwarded-port': port,
      });
    } finally {
      await behindProxy.close();
    }
  });

  test('rate-limit headers are on proxied answers', async () => {
    const counted = await startGateway({ ...targets, RATE_LIMIT_IP_PER_MIN: '100', RATE_LIMIT_USER_PER_MIN: '0' });
    try {
      await fetch(`${counted.url}/reviews/by-entity`);
      const res = await fetch(`${counted.url}/reviews/by-entity`);
      expect(res.headers.get('ratelimit-policy')).toBe('100;w=60');
      expect(res.headers.get('ratelimit')).toMatch(/^limit=100, remaining=98, reset=\d+$/);
    } finally {
      await counted.close();
    }
  });

  test('security headers and CORS are set', async () => {
    const res = await fetch(`${gateway.url}/v1/auth/.well-known/jwks.json`, { headers: { origin: 'https://shop.example' } });
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });
});
