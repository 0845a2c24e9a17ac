import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import jwt from 'jsonwebtoken';
import { createLogger, redactQuerySecrets } from '@mkt/kit/logger';
import { loadConfig } from '../src/config';
import { startMetricsServer } from '../src/http/metrics-server';
import { disconnectDatabase, rawRequest, startGateway, startUpstream, urlOf, type Gateway } from './harness';
import { call, makeKeyPair, testServers, uniqueName, waitFor } from './support';

const names = ['wallet', 'catalog', 'crm', 'consultation', 'review'] as const;
let upstreams: Server[];
let targets: Record<string, string>;
let gateway: Gateway;
const password = 'correct horse battery';

beforeAll(async () => {
  upstreams = await Promise.all(names.map((name) => startUpstream(name)));
  targets = Object.fromEntries(names.map((name, i) => [`${name.toUpperCase()}_URL`, urlOf(upstreams[i]!)]));
  gateway = await startGateway({ ...targets, RATE_LIMIT_IP_PER_MIN: '0', RATE_LIMIT_USER_PER_MIN: '0' });
});
afterAll(async () => {
  await gateway.close();
  await Promise.all(upstreams.map((server) => new Promise((resolve) => server.close(resolve))));
  await disconnectDatabase();
});

const isNotFoundEnvelope = (body: string) => {
  const parsed = JSON.parse(body);
  return parsed.success === false && parsed.errors[0].code === 'not_found';
};

describe('request targets that are never routed', () => {
  test.each([
    'GET http://evil.example/wallets/banks',
    'GET http://evil.example/healthz',
    'GET https://evil.example:8443/v1/wallet',
    'OPTIONS *',
    'GET //evil.example/wallets/banks',
  ])('%s is a 404 envelope', async (requestLine) => {
    const res = await rawRequest(gateway.url, requestLine);
    expect(res.status).toBe(404);
    expect(isNotFoundEnvelope(res.body)).toBe(true);
  });

  test.each(['/wallets/../metrics', '/wallets/%2e%2e/metrics', '/reviews/./by-entity', '/customers/%2E/x', '/wallets/..'])(
    'a dot segment (%s) is a 404 envelope and reaches no service',
    async (path) => {
      const res = await rawRequest(gateway.url, `GET ${path}`);
      expect(res.status).toBe(404);
      expect(isNotFoundEnvelope(res.body)).toBe(true);
    },
  );

  // Spellings another hop reads differently: express cuts a fragment (`/metrics#x` was the
  // gateway's own /metrics), a hop that parses the target as a URL turns `\\` into `/` (the slots query past its own limit).
  test.each([
    '/metrics#x',
    '/consultations/abc\\slots',
    '/consultations/abc/slots#',
    '/wallets/..\\internal\\holds',
    '/reviews/by-entity#',
  ])('a target with a fragment or a backslash (%s) is a 404 envelope and reaches no service', async (path) => {
    const res = await rawRequest(gateway.url, `GET ${path}`);
    expect(res.status).toBe(404);
    expect(isNotFoundEnvelope(res.body)).toBe(true);
  });

  test('an ordinary proxied path with dots inside a segment still works', async () => {
    const res = await rawRequest(gateway.url, 'GET /reviews/by-entity?name=a..b');
    expect(res.status).toBe(200);
  });
});

describe('metrics are not public', () => {
  test('/metrics on the public port is a 404 envelope', async () => {
    for (const path of ['/metrics', '/metrics/', '/metrics?x=1']) {
      const res = await rawRequest(gateway.url, `GET ${path}`);
      expect(res.status).toBe(404);
      expect(isNotFoundEnvelope(res.body)).toBe(true);
    }
  });

  test('the metrics listener serves them on its own port', async () => {
    const server = await startMetricsServer(0, '127.0.0.1');
    try {
      const res = await fetch(`${urlOf(server)}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('marketplace_http_request_duration_seconds');
      expect((await fetch(`${urlOf(server)}/v1/wallet`)).status).toBe(404);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('X-Forwarded-For and TRUST_PROXY', () => {
  const spoofed = (target: Gateway, i: number) =>
    call(target.url, 'GET', '/wallets/banks', { headers: { 'x-forwarded-for': `203.0.113.${i}` } });

  test('by default a client cannot escape the per-IP limit by inventing X-Forwarded-For', async () => {
    const limited = await startGateway({ ...targets, RATE_LIMIT_IP_PER_MIN: '2', RATE_LIMIT_USER_PER_MIN: '0' });
    try {
      const statuses = [];
      for (let i = 1; i <= 3; i += 1) statuses.push((await spoofed(limited, i)).status);
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      await limited.close();
    }
  });

  test('with TRUST_PROXY=1 the address the trusted proxy forwards is the client', async () => {
    const behindProxy = await startGateway({ ...targets, RATE_LIMIT_IP_PER_MIN: '2', RATE_LIMIT_USER_PER_MIN: '0', TRUST_PROXY: '1' });
    try {
      const statuses = [];
      for (let i = 1; i <= 3; i += 1) statuses.push((await spoofed(behindProxy, i)).status);
      expect(statuses).toEqual([200, 200, 200]);
      expect((await spoofed(behindProxy, 1)).status).toBe(200);
      expect((await spoofed(behindProxy, 1)).status).toBe(429);
    } finally {
      await behindProxy.close();
    }
  });
});

describe('production configuration', () => {
  const { mongoUrl, amqpUrl } = testServers();
  const keys = makeKeyPair();
  const base = {
    NODE_ENV: 'production',
    MONGO_URL: mongoUrl,
    AMQP_URL: amqpUrl,
    JWT_PRIVATE_KEY: keys.privateKey,
    JWT_PUBLIC_KEY: keys.publicKey,
    CORS_ORIGINS: 'https://shop.example',
  };

  test.each([
    [{ ADMIN_EMAIL: 'a@b.co', ADMIN_PASSWORD: 'admin-change-me' }, /ADMIN_PASSWORD: a published default/],
    [{ ADMIN_EMAIL: 'a@b.co', ADMIN_PASSWORD: 'short-pass1' }, /ADMIN_PASSWORD: at least 12/],
    [{ CORS_ORIGINS: undefined }, /CORS_ORIGINS: required in production/],
    [{ CORS_ORIGINS: 'https://shop.example, *' }, /CORS_ORIGINS: `\*` is not allowed/],
  ])('refuses to start with %p', (change, problem) => {
    expect(() => loadConfig({ ...base, ...change })).toThrow(problem);
  });

  test('the same settings are fine outside production, and a strong production setup starts', () => {
    expect(() =>
      loadConfig({ ...base, NODE_ENV: 'development', ADMIN_EMAIL: 'a@b.co', ADMIN_PASSWORD: 'admin-change-me', CORS_ORIGINS: undefined }),
    ).not.toThrow();
    expect(loadConfig({ ...base, ADMIN_EMAIL: 'a@b.co', ADMIN_PASSWORD: 'a long admin secret' }).CORS_ORIGINS).toBe('https://shop.example');
  });

  test('CORS answers only the configured origins', async () => {
    const strict = await startGateway({ ...targets, CORS_ORIGINS: 'https://shop.example', NODE_ENV: 'production' });
    try {
      const allowed = await fetch(`${strict.url}/wallets/banks`, { headers: { origin: 'https://shop.example' } });
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://shop.example');
      const other = await fetch(`${strict.url}/wallets/banks`, { headers: { origin: 'https://evil.example' } });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await strict.close();
    }
  });
});

describe('identity edge cases', () => {
  test('the configured admin exists before the first request is answered', async () => {
    const admin = { email: `${uniqueName('admin')}@example.com`, password: 'a long admin secret' };
    const seeded = await startGateway({ ...targets, ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password });
    try {
      const first = await call(seeded.url, 'POST', '/v1/auth/login', { body: admin });
      expect(first.status).toBe(200);
      expect(first.body.data.user.role).toBe('admin');
    } finally {
      await seeded.close();
    }
  });

  test('registrations per address are limited (a taken email stays a 409, see the README)', async () => {
    const limited = await startGateway({ ...targets, RATE_LIMIT_REGISTER_IP_PER_HOUR: '2' });
    try {
      const address = `${uniqueName('reg')}@example.com`;
      const register = () =>
        call(limited.url, 'POST', '/v1/auth/register', { body: { email: address, password, fullName: 'R', role: 'buyer' } });
      expect((await register()).status).toBe(200);
      expect((await register()).status).toBe(409);
      const third = await register();
      expect(third.status).toBe(429);
      expect(third.body).toMatchObject({ success: false, errors: [{ code: 'rate_limited' }] });
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });

  test('after logout the refresh token is dead and the access token expires within ACCESS_TOKEN_TTL_SECONDS', async () => {
    const short = await startGateway({ ...targets, ACCESS_TOKEN_TTL_SECONDS: '120' });
    try {
      const session = (
        await call(short.url, 'POST', '/v1/auth/register', {
          body: { email: `${uniqueName('out')}@example.com`, password, fullName: 'O', role: 'buyer' },
        })
      ).body.data;
      expect(session.expiresIn).toBe(120);
      expect((await call(short.url, 'POST', '/v1/auth/logout', { body: { refreshToken: session.refreshToken } })).status).toBe(200);
      expect((await call(short.url, 'POST', '/v1/auth/refresh', { body: { refreshToken: session.refreshToken } })).status).toBe(401);
      const claims = jwt.decode(session.accessToken) as jwt.JwtPayload;
      expect(claims.exp! - claims.iat!).toBe(120);
    } finally {
      await short.close();
    }
  });
});

/** A gateway logger at info whose lines are kept, in order, to be read by the test. */
function logSink() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger('gateway', 'info', sink) };
}

describe('access logs', () => {
  test('secret query parameters are redacted in the request log line', async () => {
    const { lines, logger } = logSink();
    const logged = await startGateway({ ...targets, ACCESS_LOG_SAMPLE_RATE: '1' }, makeKeyPair(), logger);
    try {
      await call(logged.url, 'GET', '/wallets/checkout/MKT-TOP-UP-AAAAAAAA?token=s3cr3t-checkout-token&lang=en');
      const line = await waitFor(() => lines.find((l) => l.includes('/wallets/checkout/MKT-TOP-UP-AAAAAAAA')), {
        what: 'the request log line',
      });
      expect(line).toContain('token=[redacted]&lang=en');
      expect(lines.join('')).not.toContain('s3cr3t-checkout-token');
    } finally {
      await logged.close();
    }
  });

  test('with ACCESS_LOG_SAMPLE_RATE=0 successful requests are not logged, failures are', async () => {
    const { lines, logger } = logSink();
    const quiet = await startGateway({ ...targets, ACCESS_LOG_SAMPLE_RATE: '0' }, makeKeyPair(), logger);
    try {
      expect((await call(quiet.url, 'GET', '/reviews/by-entity?ok=1')).status).toBe(200);
      expect((await rawRequest(quiet.url, 'GET /wallets/../x')).status).toBe(404);
      // The failure's line comes after the success's would have: once it is there, the other is not coming.
      await waitFor(
        () => lines.some((l) => l.includes('"request completed"') && l.includes('/wallets/../x') && l.includes('"statusCode":404')),
        {
          what: 'the log line of the failed request',
        },
      );
      const requestLines = lines.filter((l) => l.includes('"request completed"'));
      expect(requestLines.some((l) => l.includes('/reviews/by-entity?ok=1'))).toBe(false);
    } finally {
      await quiet.close();
    }
  });

  test('with no successful read sampled, other methods and slow answers are still logged', async () => {
    const { lines, logger } = logSink();
    const quiet = await startGateway({ ...targets, ACCESS_LOG_SAMPLE_RATE: '0' }, makeKeyPair(), logger);
    const slow = await startGateway({ ...targets, ACCESS_LOG_SAMPLE_RATE: '0', ACCESS_LOG_SLOW_MS: '0' }, makeKeyPair(), logger);
    try {
      expect((await call(quiet.url, 'GET', '/reviews/by-entity?fast=1')).status).toBe(200);
      expect((await call(quiet.url, 'POST', '/reviews/by-entity?write=1', { body: {} })).status).toBe(200);
      expect((await call(slow.url, 'GET', '/reviews/by-entity?slow=1')).status).toBe(200);
      const logged = (what: string) =>
        lines.some((l) => l.includes('"request completed"') && l.includes(what) && l.includes('"statusCode":200'));
      await waitFor(() => logged('?write=1') && logged('?slow=1'), { what: 'the lines of the write and of the slow read' });
      expect(logged('?fast=1')).toBe(false);
    } finally {
      await quiet.close();
      await slow.close();
    }
  });

  test('only secret parameters are redacted', () => {
    expect(redactQuerySecrets('/p?q=coffee&page=2&monkey=1')).toBe('/p?q=coffee&page=2&monkey=1');
    expect(redactQuerySecrets('/x?access_token=a&api_key=b&signature=c')).toBe(
      '/x?access_token=[redacted]&api_key=[redacted]&signature=[redacted]',
    );
    // The spans' rule: signed-URL names and any name ending in token or secret, in any case.
    expect(redactQuerySecrets('/x?X-Amz-Credential=a&Client_Secret=b&RESET_TOKEN=c&tokens=d')).toBe(
      '/x?X-Amz-Credential=[redacted]&Client_Secret=[redacted]&RESET_TOKEN=[redacted]&tokens=d',
    );
    // A nested, unencoded query in a value: its parameters are read too.
    expect(redactQuerySecrets('/checkout/return?next=/pay?token=S1&page=2')).toBe('/checkout/return?next=/pay?token=[redacted]&page=2');
    expect(redactQuerySecrets('/cb?redirect=https://a/b?access_token=S2')).toBe('/cb?redirect=https://a/b?access_token=[redacted]');
    expect(redactQuerySecrets('/cb?state=x?code=S3')).toBe('/cb?state=x?code=[redacted]');
  });
});
