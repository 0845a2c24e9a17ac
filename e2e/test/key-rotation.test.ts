import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, makeKeyPair } from '@mkt/infra';
import { register, waitFor, type Session } from './fixtures';
import { startSystem, type System } from './system';

/**
 * A signing key rotated on a running system, no process restarted: the gateway reads its key
 * directory (a mounted Secret's stand-in) and the services verify by `kid` against its JWKS.
 */
const CACHE_SECONDS = 2;
const dir = mkdtempSync(join(tmpdir(), 'e2e-keys-'));
const pairs = { k1: makeKeyPair(), k2: makeKeyPair() };
const put = (name: string, text: string) => writeFileSync(join(dir, name), text);
let system: System;

beforeAll(async () => {
  put('k1.pem', pairs.k1.privateKey);
  put('current', 'k1');
  system = await startSystem({ keyDirectory: { dir, cacheSeconds: CACHE_SECONDS } });
}, 120_000);
afterAll(async () => {
  await system?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid?: string }).kid;
const jwksKids = async () =>
  ((await call(system.gateway, 'GET', '/v1/auth/.well-known/jwks.json')).body.keys as Array<{ kid: string }>)
    .map((key) => key.kid)
    .sort()
    .join();
/** A token-only read of three services behind the gateway: each status. */
const reads = async (token: string, base = system.gateway) =>
  Promise.all([
    call(base, 'GET', '/v1/wallet', { token }),
    call(base, 'GET', '/customers', { token }),
    call(base, 'GET', '/physical-products/seller-products/my', { token }),
  ]);
const statuses = async (token: string) => (await reads(token)).map((res) => res.status);

test('add next, promote, retire with no restart: old tokens verify until retired, new tokens carry the new kid, refresh tokens survive', async () => {
  const seller: Session = await register(system, 'seller', 'Rotating Seller');
  const oldToken = seller.token;
  const login = await call(system.gateway, 'POST', '/v1/auth/login', { body: { email: seller.email, password: 'a long password' } });
  const oldRefresh = login.body.data.refreshToken as string;
  expect(kidOf(oldToken)).toBe('k1');
  expect(await statuses(oldToken)).toEqual([200, 200, 200]);

  // Add the next key: published, not yet signing.
  put('k2.pem', pairs.k2.privateKey);
  await waitFor('k2 published', jwksKids, (kids) => kids === 'k1,k2', 10_000);

  // Promote it: new tokens carry k2 and every service takes them (a kid it has not seen fetches
  // the JWKS once); k1's tokens go on working.
  put('current', 'k2');
  const refreshed = await waitFor(
    'a token signed by k2',
    async () =>
      (await call(system.gateway, 'POST', '/v1/auth/login', { body: { email: seller.email, password: 'a long password' } })).body.data,
    (data) => kidOf(data.accessToken) === 'k2',
    10_000,
  );
  expect(await statuses(refreshed.accessToken)).toEqual([200, 200, 200]);
  expect(await statuses(oldToken)).toEqual([200, 200, 200]);
  // A refresh token issued under k1 still works and gets a k2 access token.
  const renewed = await call(system.gateway, 'POST', '/v1/auth/refresh', { body: { refreshToken: oldRefresh } });
  expect(renewed.status).toBe(200);
  expect(kidOf(renewed.body.data.accessToken)).toBe('k2');

  // The gateway briefly away: the services keep verifying with the keys they hold.
  await system.processes.gateway.kill('SIGKILL');
  await new Promise((resolve) => setTimeout(resolve, CACHE_SECONDS * 1000 + 500));
  const direct = await Promise.all([
    call(system.processes.wallet.url, 'GET', '/v1/wallet', { token: refreshed.accessToken }),
    call(system.processes.crm.url, 'GET', '/customers', { token: refreshed.accessToken }),
  ]);
  expect(direct.map((res) => res.status)).toEqual([200, 200]);
  await system.processes.gateway.start();

  // Retire k1: the gateway and then, once their cache age has passed, every service refuse its
  // tokens with 401 and the error envelope; k2's tokens go on.
  unlinkSync(join(dir, 'k1.pem'));
  await waitFor('k1 retired from the JWKS', jwksKids, (kids) => kids === 'k2', 10_000);
  const refused = await waitFor(
    'k1 refused everywhere',
    () => reads(oldToken),
    (all) => all.every((res) => res.status === 401),
    15_000,
  );
  for (const res of refused) expect(res.body).toMatchObject({ success: false, errors: [{ code: 'unauthenticated' }] });
  expect((await call(system.gateway, 'GET', '/v1/auth/me', { token: oldToken })).status).toBe(401);
  expect(await statuses(refreshed.accessToken)).toEqual([200, 200, 200]);
}, 120_000);
