import { createPublicKey } from 'node:crypto';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { accessKeysFrom, jwksAccessKeys } from '../src/http/access-keys';
import { authenticate, currentUser } from '../src/http/auth';
import { createDatabase } from '@mkt/kit/db';
import { createRuntime } from '@mkt/kit/runtime';
import { createService, verifyAccessToken } from '@mkt/kit/http';
import { call, listenOnFreePort, makeKeyPair, signTestToken, type KeyPair } from '@mkt/infra';

const log = pino({ level: 'silent' });
const user = { id: '5b1f3f43-0000-4000-8000-000000000002', ref: 'MKT-USR-CD34EF56', role: 'buyer' as const };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const pairs: Record<string, KeyPair> = { k1: makeKeyPair(), k2: makeKeyPair(), k3: makeKeyPair() };
const jwkOf = (kid: string) => ({ ...createPublicKey(pairs[kid]!.publicKey).export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' });
const tokenOf = (kid: string, expiresIn = 900) => signTestToken(pairs[kid]!.privateKey, user, { keyid: kid, expiresIn });

/** A stand-in for the gateway's JWKS: the kids it serves, how often it was asked, and it can go away and come back on its port. */
class JwksServer {
  kids: string[];
  fetches = 0;
  private server: Server | null = null;
  private port = 0;

  constructor(kids: string[]) {
    this.kids = kids;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/v1/auth/.well-known/jwks.json`;
  }

  async up(): Promise<void> {
    this.server = http.createServer((_req, res) => {
      this.fetches += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: this.kids.map(jwkOf) }));
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const servers: JwksServer[] = [];
async function jwks(kids: string[]): Promise<JwksServer> {
  const server = new JwksServer(kids);
  await server.up();
  servers.push(server);
  return server;
}
afterAll(async () => {
  for (const server of servers) await server.down();
});

const options = (url: string, more: Partial<Parameters<typeof jwksAccessKeys>[0]> = {}) => ({
  url,
  cacheSeconds: 60,
  requestsPerMinute: 10,
  staleSeconds: 900,
  log,
  ...more,
});

describe('access tokens verified by kid against the gateway JWKS (jwks-rsa)', () => {
  test('each token is checked with the key its kid names; a token of a key not in the set, or without a kid, is refused', async () => {
    const server = await jwks(['k1', 'k2']);
    const keys = jwksAccessKeys(options(server.url));
    await expect(verifyAccessToken(tokenOf('k1'), keys)).resolves.toMatchObject({ id: user.id });
    await expect(verifyAccessToken(tokenOf('k2'), keys)).resolves.toMatchObject({ id: user.id });
    // k1's kid on a token k3 signed: the signature does not hold under k1.
    const forged = signTestToken(pairs.k3!.privateKey, user, { keyid: 'k1' });
    await expect(verifyAccessToken(forged, keys)).rejects.toThrow('not valid');
    await expect(verifyAccessToken(tokenOf('k3'), keys)).rejects.toThrow('not valid');
    await expect(verifyAccessToken(signTestToken(pairs.k1!.privateKey, user), keys)).rejects.toThrow('not valid');
  });

  test('a kid not seen yet fetches the JWKS once; later tokens of it are served from the cache', async () => {
    const server = await jwks(['k1']);
    const keys = jwksAccessKeys(options(server.url));
    await keys.refresh();
    await expect(verifyAccessToken(tokenOf('k1'), keys)).resolves.toMatchObject({ id: user.id });
    const before = server.fetches;
    server.kids = ['k1', 'k2'];
    // Concurrent first tokens of the new kid share one fetch.
    await Promise.all(
      [1, 2, 3].map((n) => expect(verifyAccessToken(tokenOf('k2', 900 + n), keys)).resolves.toMatchObject({ id: user.id })),
    );
    expect(server.fetches - before).toBe(1);
    await expect(verifyAccessToken(tokenOf('k2', 950), keys)).resolves.toMatchObject({ id: user.id });
    expect(server.fetches - before).toBe(1);
  });

  test('unknown kids cannot make the service fetch the JWKS more than its limit per minute', async () => {
    const server = await jwks(['k1']);
    const keys = jwksAccessKeys(options(server.url, { requestsPerMinute: 3 }));
    for (let n = 0; n < 8; n += 1) {
      const bogus = signTestToken(pairs.k3!.privateKey, user, { keyid: `bogus-${n}` });
      await expect(verifyAccessToken(bogus, keys)).rejects.toThrow('not valid');
    }
    expect(server.fetches).toBeLessThanOrEqual(3);
    // A kid the background refresh has seen still verifies while the limit is spent.
    await keys.refresh();
    await expect(verifyAccessToken(tokenOf('k1'), keys)).resolves.toMatchObject({ id: user.id });
  });

  test('a key retired from the JWKS is refused once the cache age has passed, even for a token verified before', async () => {
    const server = await jwks(['k1', 'k2']);
    const keys = jwksAccessKeys(options(server.url, { cacheSeconds: 1 }));
    const old = tokenOf('k1');
    await expect(verifyAccessToken(old, keys)).resolves.toMatchObject({ id: user.id });
    server.kids = ['k2'];
    await sleep(1_200);
    await expect(verifyAccessToken(old, keys)).rejects.toThrow('not valid');
    await expect(verifyAccessToken(tokenOf('k2'), keys)).resolves.toMatchObject({ id: user.id });
  });

  test('while the JWKS is away the keys it served keep verifying (until the stale limit); an unknown kid is refused', async () => {
    const server = await jwks(['k1']);
    const keys = jwksAccessKeys(options(server.url, { cacheSeconds: 1, staleSeconds: 3, timeoutMs: 1_000 }));
    await keys.refresh();
    await expect(verifyAccessToken(tokenOf('k1'), keys)).resolves.toMatchObject({ id: user.id });
    await server.down();
    await sleep(1_200);
    // The cache entry is past its age and the JWKS cannot be fetched: the kept key is used.
    await expect(verifyAccessToken(tokenOf('k1', 901), keys)).resolves.toMatchObject({ id: user.id });
    await expect(verifyAccessToken(tokenOf('k2'), keys)).rejects.toThrow('not valid');
    await sleep(3_000);
    await expect(verifyAccessToken(tokenOf('k1', 902), keys)).rejects.toThrow('not valid');
    await server.up();
    await expect(verifyAccessToken(tokenOf('k1', 903), keys)).resolves.toMatchObject({ id: user.id });
  });

  test('at start the set is fetched with retries: not loaded (not ready) until the JWKS answers', async () => {
    const server = await jwks(['k1']);
    await server.down();
    const keys = jwksAccessKeys(options(server.url, { timeoutMs: 500 }));
    const stop = keys.start();
    try {
      await sleep(700);
      expect(keys.loaded()).toBe(false);
      await server.up();
      for (let i = 0; i < 50 && !keys.loaded(); i += 1) await sleep(100);
      expect(keys.loaded()).toBe(true);
    } finally {
      stop();
    }
  });

  test('configuration: the JWKS URL wins over the one public key; neither is refused at start', () => {
    const base = { JWT_JWKS_CACHE_SECONDS: 300, JWT_JWKS_REQUESTS_PER_MINUTE: 10, JWT_JWKS_STALE_SECONDS: 900 };
    expect(accessKeysFrom({ ...base, JWT_JWKS_URL: 'http://gateway/jwks', JWT_PUBLIC_KEY: 'pem' }, log).loaded).toBeDefined();
    expect(accessKeysFrom({ ...base, JWT_PUBLIC_KEY: 'pem' }, log).loaded).toBeUndefined();
    expect(() => accessKeysFrom(base, log)).toThrow('JWT_JWKS_URL');
  });

  test('through a service: a retired key answers 401 with the error envelope, the new key 200', async () => {
    const server = await jwks(['k1', 'k2']);
    const keys = jwksAccessKeys(options(server.url, { cacheSeconds: 1 }));
    const app = createService({
      name: 'keys-test',
      log,
      readiness: [],
      routes: (a) => a.get('/whoami', authenticate(keys), (req, res) => res.json({ success: true, data: currentUser(req) })),
    });
    const listening = await listenOnFreePort(app);
    try {
      const as = (token: string) => call(listening.url, 'GET', '/whoami', { token });
      const old = tokenOf('k1');
      expect((await as(old)).status).toBe(200);
      server.kids = ['k2'];
      await sleep(1_200);
      const refused = await as(old);
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ success: false, errors: [{ code: 'unauthenticated' }] });
      expect((await as(tokenOf('k2'))).body.data).toMatchObject({ id: user.id });
    } finally {
      await listening.close();
    }
  });

  test("a service's runtime made with JWT_JWKS_URL: /readyz is 503 (keys loading) until the gateway's JWKS answers, then 200", async () => {
    const server = await jwks(['k1']);
    await server.down();
    const runtime = createRuntime({
      name: 'keys-ready-test',
      config: { AMQP_URL: 'amqp://unused', JWT_JWKS_URL: server.url, JWT_JWKS_CACHE_SECONDS: 60 },
      log,
      db: createDatabase(),
      readinessNeedsDatabase: false,
    });
    const app = createService({ name: 'keys-ready-test', log, readiness: runtime.readiness, routes: () => undefined });
    const listening = await listenOnFreePort(app);
    const stop = runtime.accessKeys!.start!();
    try {
      const notReady = await call(listening.url, 'GET', '/readyz');
      expect(notReady.status).toBe(503);
      expect(notReady.body.checks.keys).toBe('loading');
      await server.up();
      for (let i = 0; i < 50 && (await call(listening.url, 'GET', '/readyz')).status !== 200; i += 1) await sleep(100);
      const ready = await call(listening.url, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.data.checks.keys).toBe('up');
    } finally {
      stop();
      await listening.close();
    }
  });
});
