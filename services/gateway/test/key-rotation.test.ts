import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jwt from 'jsonwebtoken';
import { disconnectDatabase, startGateway, type Gateway } from './harness';
import { call, makeKeyPair, uniqueName, waitFor } from './support';

const password = 'correct horse battery';
const pairs = { k1: makeKeyPair(), k2: makeKeyPair(), other: makeKeyPair() };
const dir = mkdtempSync(join(tmpdir(), 'gateway-keys-'));
let gateway: Gateway;

const kidOf = (token: string) => (jwt.decode(token, { complete: true })?.header.kid as string | undefined) ?? null;
const jwksKids = async (url: string) =>
  ((await call(url, 'GET', '/v1/auth/.well-known/jwks.json')).body.keys as Array<{ kid: string }>).map((key) => key.kid).sort();
const deviceIdOf = (setCookie: string | null) =>
  JSON.parse(Buffer.from(setCookie!.split(';')[0]!.split('=')[1]!.split('.')[0]!, 'base64url').toString()).d as string;
const login = (url: string, email: string, cookie?: string) =>
  call(url, 'POST', '/v1/auth/login', { body: { email, password }, headers: cookie ? { cookie } : {} });
/** The key set as an operator changes it: the mounted Secret's files. */
const put = (name: string, text: string) => writeFileSync(join(dir, name), text);

beforeAll(async () => {
  put('k1.pem', pairs.k1.privateKey);
  put('current', 'k1\n');
  gateway = await startGateway({
    JWT_KEYS_DIR: dir,
    JWT_KEYS_RELOAD_SECONDS: '1',
    JWT_PRIVATE_KEY: '',
    JWT_PUBLIC_KEY: '',
    RATE_LIMIT_IP_PER_MIN: '0',
    RATE_LIMIT_USER_PER_MIN: '0',
  });
});
afterAll(async () => {
  await gateway.close();
  await disconnectDatabase();
  rmSync(dir, { recursive: true, force: true });
});

describe('signing keys from a key directory, rotated on a running gateway', () => {
  test('add next, promote, retire: old tokens verify until retired, new ones carry the new kid; refresh tokens and device cookies survive', async () => {
    const email = `${uniqueName('rotate')}@example.com`;
    const registered = await call(gateway.url, 'POST', '/v1/auth/register', {
      body: { email, password, fullName: 'Rotate Me', role: 'buyer' },
    });
    expect(registered.status).toBe(200);
    const first = await login(gateway.url, email);
    const oldToken = first.body.data.accessToken as string;
    const oldRefresh = first.body.data.refreshToken as string;
    const cookie = first.headers.get('set-cookie')!.split(';')[0]!;
    expect(kidOf(oldToken)).toBe('k1');
    expect(await jwksKids(gateway.url)).toEqual(['k1']);

    // 1. The next key is published before it signs.
    put('k2.pem', pairs.k2.privateKey);
    await waitFor(async () => (await jwksKids(gateway.url)).join() === 'k1,k2', {
      what: 'k2 published',
      timeoutMs: 5_000,
      intervalMs: 200,
    });
    expect(kidOf((await login(gateway.url, email)).body.data.accessToken)).toBe('k1');

    // 2. Promoted: new tokens carry k2; k1's tokens still verify (it is the previous key).
    put('current', 'k2');
    await waitFor(async () => kidOf((await login(gateway.url, email)).body.data.accessToken) === 'k2', {
      what: 'tokens signed by k2',
      timeoutMs: 5_000,
      intervalMs: 250,
    });
    expect((await call(gateway.url, 'GET', '/v1/auth/me', { token: oldToken })).status).toBe(200);
    const refreshed = await call(gateway.url, 'POST', '/v1/auth/refresh', { body: { refreshToken: oldRefresh } });
    expect(refreshed.status).toBe(200);
    expect(kidOf(refreshed.body.data.accessToken)).toBe('k2');
    // The device cookie issued under k1 is still this device's: its id is kept when signed in again.
    const again = await login(gateway.url, email, cookie);
    expect(deviceIdOf(again.headers.get('set-cookie'))).toBe(deviceIdOf(first.headers.get('set-cookie')));

    // 3. Retired: k1 leaves the set; its tokens are refused with the error envelope.
    unlinkSync(join(dir, 'k1.pem'));
    await waitFor(async () => (await jwksKids(gateway.url)).join() === 'k2', { what: 'k1 retired', timeoutMs: 5_000, intervalMs: 200 });
    const refused = await call(gateway.url, 'GET', '/v1/auth/me', { token: oldToken });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ success: false, errors: [{ code: 'unauthenticated' }] });
    expect((await call(gateway.url, 'GET', '/v1/auth/me', { token: refreshed.body.data.accessToken })).status).toBe(200);
  });

  test('a key set that does not read (current naming no key, a bad PEM) is refused and the last good one kept', async () => {
    const email = `${uniqueName('broken')}@example.com`;
    await call(gateway.url, 'POST', '/v1/auth/register', { body: { email, password, fullName: 'Kept Set', role: 'buyer' } });
    const before = await jwksKids(gateway.url);
    put('current', 'k9');
    put('bad.pem', 'not a key');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await jwksKids(gateway.url)).toEqual(before);
    const session = await login(gateway.url, email);
    expect(session.status).toBe(200);
    expect(kidOf(session.body.data.accessToken)).toBe('k2');
    unlinkSync(join(dir, 'bad.pem'));
    put('current', 'k2');
  });

  test('the device cookie key does not depend on the signing key: another gateway with another key reads the cookie', async () => {
    const email = `${uniqueName('device')}@example.com`;
    await call(gateway.url, 'POST', '/v1/auth/register', { body: { email, password, fullName: 'Known Device', role: 'buyer' } });
    const first = await login(gateway.url, email);
    const second = await startGateway({ RATE_LIMIT_IP_PER_MIN: '0', RATE_LIMIT_USER_PER_MIN: '0' }, pairs.other);
    try {
      const again = await login(second.url, email, first.headers.get('set-cookie')!.split(';')[0]!);
      expect(again.status).toBe(200);
      expect(deviceIdOf(again.headers.get('set-cookie'))).toBe(deviceIdOf(first.headers.get('set-cookie')));
    } finally {
      await second.close();
    }
  });
});
