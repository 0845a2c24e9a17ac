import type { Server } from 'node:http';
import { hash as bcryptHash } from '@node-rs/bcrypt';
import { PasswordHasher } from '../src/credentials/passwords';
import { PasswordHashingBusy } from '../src/domain/errors';
import { delayAfter } from '../src/domain/login-throttle';
import { disconnectDatabase, startGateway, startUpstream, urlOf, type Gateway } from './harness';
import { call, uniqueName } from './support';
import { randomInt } from 'node:crypto';
import { getMetrics } from '@mkt/kit/metrics';

const password = 'correct horse battery';
const email = () => `${uniqueName('login')}@example.com`;
let upstream: Server;
let gateway: Gateway;

beforeAll(async () => {
  upstream = await startUpstream('catalog');
  gateway = await startGateway({ CATALOG_URL: urlOf(upstream), RATE_LIMIT_IP_PER_MIN: '0', RATE_LIMIT_USER_PER_MIN: '0' });
});
afterAll(async () => {
  await gateway.close();
  await new Promise((resolve) => upstream.close(resolve));
  await disconnectDatabase();
});

const login = (target: Gateway, body: object) => call(target.url, 'POST', '/v1/auth/login', { body });

describe('password hashing off the event loop', () => {
  test('proxied requests keep answering while 60 failed logins at production strength are in flight', async () => {
    // The hash parameters of production (argon2id, 19 MiB, 2 passes), not the tests' cheap ones.
    const strong = await startGateway({
      CATALOG_URL: urlOf(upstream),
      RATE_LIMIT_IP_PER_MIN: '0',
      RATE_LIMIT_USER_PER_MIN: '0',
      PASSWORD_HASH_MEMORY_KIB: '19456',
      PASSWORD_HASH_TIME_COST: '2',
    });
    // Enough hashes queued that five proxied round trips fit well inside them on a busy machine.
    const LOGINS = 60;
    try {
      let loginsDone = 0;
      const logins = Array.from({ length: LOGINS }, (_, i) =>
        login(strong, { email: `nobody-${i}-${email()}`, password: 'wrong password!' }).then((res) => {
          loginsDone += 1;
          return res.status;
        }),
      );
      const proxied: Array<{ status: number; loginsDoneThen: number }> = [];
      for (let i = 0; i < 5; i += 1) {
        const res = await call(strong.url, 'GET', '/physical-products/categories');
        proxied.push({ status: res.status, loginsDoneThen: loginsDone });
      }
      const statuses = await Promise.all(logins);

      expect(statuses).toEqual(Array(LOGINS).fill(401));
      expect(proxied.map((p) => p.status)).toEqual([200, 200, 200, 200, 200]);
      // Every proxied answer arrived while logins were still being checked: with the hashes on
      // the event loop, a request would wait behind the hashes queued before it. (Counted in
      // logins, not milliseconds: how long a hash takes depends on the machine.)
      expect(proxied.filter((p) => p.loginsDoneThen >= LOGINS)).toEqual([]);
    } finally {
      await strong.close();
    }
  });

  test('no more hashes run at once than configured; past the waiting room the answer is busy', async () => {
    const hasher = new PasswordHasher({ memoryKib: 4096, timeCost: 1, concurrency: 2, maxWaiting: 3 });
    let maxRunning = 0;
    const sample = setInterval(() => (maxRunning = Math.max(maxRunning, hasher.load().running)), 1);
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => hasher.hash(password)));
    clearInterval(sample);
    expect(maxRunning).toBeLessThanOrEqual(2);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused).toHaveLength(3);
    expect(refused[0]!.reason).toBeInstanceOf(PasswordHashingBusy);
    expect(hasher.load()).toEqual({ running: 0, waiting: 0 });
  });

  test('a user with a bcrypt hash from before still logs in, and the hash becomes argon2id', async () => {
    const address = email();
    const registered = await call(gateway.url, 'POST', '/v1/auth/register', {
      body: { email: address, password, fullName: 'Old', role: 'buyer' },
    });
    const id = registered.body.data.user.id;
    await gateway.models.User.updateOne({ _id: id }, { $set: { passwordHash: await bcryptHash(password, { cost: 4 }) } });

    expect((await login(gateway, { email: address, password: 'not the password' })).status).toBe(401);
    const first = await login(gateway, { email: address, password });
    expect(first.status).toBe(200);
    const stored = (await gateway.models.User.findById(id).lean())!.passwordHash;
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=1024,t=1,p=1\$/);
    expect((await login(gateway, { email: address, password })).status).toBe(200);
  });
});

describe('per-account failed-login throttle', () => {
  test('the 6th failed login within 15 minutes is 429 with Retry-After, even with the right password', async () => {
    const address = email();
    await call(gateway.url, 'POST', '/v1/auth/register', { body: { email: address, password, fullName: 'T', role: 'buyer' } });
    const statuses = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await login(gateway, { email: address, password: `guess number ${i}` })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const sixth = await login(gateway, { email: address, password: 'guess number 6' });
    expect(sixth.status).toBe(429);
    expect(sixth.body).toMatchObject({ success: false, errors: [{ code: 'rate_limited' }] });
    const retryAfter = Number(sixth.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(800);
    expect(retryAfter).toBeLessThanOrEqual(900);
    expect((await login(gateway, { email: address.toUpperCase(), password })).status).toBe(429);
  });

  test('an unknown email is throttled the same way (the 429 tells nothing about which emails exist)', async () => {
    const address = email();
    for (let i = 0; i < 5; i += 1) expect((await login(gateway, { email: address, password: 'whatever it is' })).status).toBe(401);
    expect((await login(gateway, { email: address, password: 'whatever it is' })).status).toBe(429);
  });

  test('parallel guesses cannot slip past the limit', async () => {
    const address = email();
    await call(gateway.url, 'POST', '/v1/auth/register', { body: { email: address, password, fullName: 'T', role: 'buyer' } });
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => login(gateway, { email: address, password: `parallel ${i}` }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
  });

  test('a success forgives earlier failures; other accounts are not affected', async () => {
    const address = email();
    await call(gateway.url, 'POST', '/v1/auth/register', { body: { email: address, password, fullName: 'T', role: 'buyer' } });
    for (let i = 0; i < 4; i += 1) await login(gateway, { email: address, password: 'wrong password!' });
    expect((await login(gateway, { email: address, password })).status).toBe(200);
    for (let i = 0; i < 4; i += 1) expect((await login(gateway, { email: address, password: 'wrong password!' })).status).toBe(401);
    expect((await login(gateway, { email: address, password })).status).toBe(200);
  });
});

describe('failed logins are counted per account and client address', () => {
  // Behind one trusted proxy, as in k8s: X-Forwarded-For names the client.
  const behindProxy = (extra: Record<string, string> = {}) =>
    startGateway({ CATALOG_URL: urlOf(upstream), RATE_LIMIT_IP_PER_MIN: '0', RATE_LIMIT_USER_PER_MIN: '0', TRUST_PROXY: '1', ...extra });
  const newAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
  const loginFrom = (target: Gateway, address: string, body: object) =>
    call(target.url, 'POST', '/v1/auth/login', { body, headers: { 'x-forwarded-for': address } });
  const registered = async (target: Gateway) => {
    const address = email();
    expect((await register(target, address)).status).toBe(200);
    return address;
  };
  const register = (target: Gateway, address: string) =>
    call(target.url, 'POST', '/v1/auth/register', { body: { email: address, password, fullName: 'T', role: 'buyer' } });
  const sleepSeconds = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000 + 100));

  let proxied: Gateway;
  beforeAll(async () => {
    proxied = await behindProxy();
  });
  afterAll(() => proxied.close());

  test("an attacker's failures from one address do not keep the owner out from another, the admin included", async () => {
    const adminEmail = `${uniqueName('admin')}@example.com`;
    const adminPassword = 'admin password 1234';
    const admin = await behindProxy({ ADMIN_EMAIL: adminEmail, ADMIN_PASSWORD: adminPassword });
    try {
      const accounts = [
        [proxied, await registered(proxied), password],
        [admin, adminEmail, adminPassword],
      ] as const;
      for (const [target, account, secret] of accounts) {
        const attacker = newAddress();
        const statuses = [];
        for (let i = 0; i < 6; i += 1)
          statuses.push((await loginFrom(target, attacker, { email: account, password: `guess ${i}` })).status);
        expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
        // Locked out of this account from the attacker's address, even with the right password...
        expect((await loginFrom(target, attacker, { email: account, password: secret })).status).toBe(429);
        // ...while the owner, from an address that has not been failing, gets in at once.
        expect((await loginFrom(target, newAddress(), { email: account, password: secret })).status).toBe(200);
      }
    } finally {
      await admin.close();
    }
  });

  test('the per-address lock holds across gateway replicas', async () => {
    const other = await behindProxy();
    try {
      const account = await registered(proxied);
      const attacker = newAddress();
      const statuses = [];
      for (let i = 0; i < 6; i += 1)
        statuses.push((await loginFrom(i % 2 ? other : proxied, attacker, { email: account, password: `guess ${i}` })).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
      expect((await loginFrom(other, newAddress(), { email: account, password })).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  test('past the free failures of an account (and its fresh-address checks), guesses from new addresses wait a doubling delay; the owner waits at most the cap', async () => {
    const slow = await behindProxy({ LOGIN_ACCOUNT_FREE_FAILURES: '3', LOGIN_DELAY_MAX_SECONDS: '2', LOGIN_FRESH_ADDRESS_CHECKS: '0' });
    try {
      const account = await registered(slow);
      const guess = (address = newAddress()) => loginFrom(slow, address, { email: account, password: 'a wrong guess' });
      for (let i = 0; i < 3; i += 1) expect((await guess()).status).toBe(401);
      expect((await guess()).status).toBe(401); // the 4th failure: the next one waits 1 s
      const early = await guess();
      expect(early.status).toBe(429);
      expect(early.body).toMatchObject({ success: false, errors: [{ code: 'rate_limited' }] });
      expect(Number(early.headers.get('retry-after'))).toBe(1);

      await sleepSeconds(1);
      expect((await guess()).status).toBe(401); // the 5th: 2 s, the cap
      const owner = newAddress();
      const held = await loginFrom(slow, owner, { email: account, password });
      expect(held.status).toBe(429);
      const wait = Number(held.headers.get('retry-after'));
      expect(wait).toBeLessThanOrEqual(2);
      await sleepSeconds(wait);
      expect((await loginFrom(slow, owner, { email: account, password })).status).toBe(200);
    } finally {
      await slow.close();
    }
  });

  test("an attacker's failing addresses wait in a lane of their own: the owner's new address is not held back by them", async () => {
    const slow = await behindProxy({ LOGIN_ACCOUNT_FREE_FAILURES: '2', LOGIN_DELAY_MAX_SECONDS: '60' });
    try {
      const account = await registered(slow);
      const attacker = newAddress();
      const guess = () => loginFrom(slow, attacker, { email: account, password: 'a wrong guess' });
      expect([(await guess()).status, (await guess()).status, (await guess()).status]).toEqual([401, 401, 401]);
      const waiting = await guess();
      expect(waiting.status).toBe(429);
      expect(Number(waiting.headers.get('retry-after'))).toBe(1);
      expect((await loginFrom(slow, newAddress(), { email: account, password })).status).toBe(200);
    } finally {
      await slow.close();
    }
  });

  test('four addresses hammering wrong passwords: the owner gets in with their device cookie and from a fresh address; the attacker stays throttled', async () => {
    // One free failure, then waits of 1 s, 2 s, 4 s, 8 s, 16 s, 32 s; an address (or a device) locks after 6 failures.
    const slow = await behindProxy({ LOGIN_ACCOUNT_FREE_FAILURES: '1', LOGIN_DELAY_MAX_SECONDS: '60', LOGIN_MAX_FAILURES: '6' });
    const total = (counts: Record<string, number>) => Object.values(counts).reduce((sum, n) => sum + n, 0);
    const throttled = async () => {
      const metric = getMetrics().registry.getSingleMetric('marketplace_gateway_login_throttled_total');
      const values = metric ? (await metric.get()).values : [];
      return Object.fromEntries(values.map((sample) => [String(sample.labels.rule), sample.value]));
    };
    try {
      const account = await registered(slow);
      const home = newAddress();
      // The owner signed in at home once: the answer sets the device cookie.
      const first = await loginFrom(slow, home, { email: account, password });
      expect(first.status).toBe(200);
      const setCookie = first.headers.get('set-cookie') ?? '';
      const deviceCookie = setCookie.split(';')[0]!;
      const before = await throttled();

      // The attack: one address fails until the waits grow, then three more join.
      const [a1, a2, a3, a4] = [newAddress(), newAddress(), newAddress(), newAddress()];
      const guess = (address: string) => loginFrom(slow, address, { email: account, password: 'a wrong guess' });
      const statuses: number[] = [];
      for (const wait of [0, 0, 1, 2, 4, 8]) {
        await sleepSeconds(wait);
        statuses.push((await guess(a1)).status);
      }
      for (const address of [a2, a3, a4, a1, a2, a3, a4, a1, a2, a3, a4]) statuses.push((await guess(address)).status);

      // The owner's browser (its device cookie), from home: in at once, whatever the lanes say.
      const withCookie = await call(slow.url, 'POST', '/v1/auth/login', {
        body: { email: account, password },
        headers: { 'x-forwarded-for': home, cookie: deviceCookie },
      });
      expect(withCookie.status).toBe(200);
      // The owner on a new machine, from an address that never failed: the right password gets in.
      expect((await loginFrom(slow, newAddress(), { email: account, password })).status).toBe(200);
      // The first six of a1 and the first of a2 pass the gates; a3 and a4 are new to the account, so each
      // has its password checked once though the new-address lane waits; then all four wait.
      expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 401, 401, 401, ...Array(8).fill(429)]);
      expect(setCookie).toMatch(/^mkt_device=[\w-]+\.[\w-]+; Max-Age=\d+; Path=\/v1\/auth\/login; HttpOnly; SameSite=Strict/);
      // The attacker is still held back, the right password included.
      expect((await guess(a1)).status).toBe(429);
      expect((await loginFrom(slow, a2, { email: account, password })).status).toBe(429);
      const after = await throttled();
      expect(total(after) - total(before)).toBeGreaterThanOrEqual(10);

      // A device cookie that keeps failing is locked itself (not the account).
      const fromDevice = (secret: string) =>
        call(slow.url, 'POST', '/v1/auth/login', {
          body: { email: account, password: secret },
          headers: { 'x-forwarded-for': home, cookie: deviceCookie },
        });
      const failed = [];
      for (let i = 0; i < 6; i += 1) failed.push((await fromDevice('not it')).status);
      expect(failed).toEqual([401, 401, 401, 401, 401, 401]);
      expect((await fromDevice(password)).status).toBe(429);
      expect((await throttled()).device! - after.device!).toBe(1);
      // A forged or foreign cookie is no device: that attempt waits in the lanes like any other.
      const forged = await call(slow.url, 'POST', '/v1/auth/login', {
        body: { email: account, password },
        headers: { 'x-forwarded-for': a3, cookie: `${deviceCookie.slice(0, -4)}AAAA` },
      });
      expect(forged.status).toBe(429);
    } finally {
      await slow.close();
    }
  });

  test('guesses from ever new addresses spend the account’s fresh-address checks, then wait; a device cookie still gets in', async () => {
    const slow = await behindProxy({ LOGIN_ACCOUNT_FREE_FAILURES: '1', LOGIN_DELAY_MAX_SECONDS: '60', LOGIN_FRESH_ADDRESS_CHECKS: '2' });
    try {
      const account = await registered(slow);
      const home = newAddress();
      const deviceCookie = (await loginFrom(slow, home, { email: account, password })).headers.get('set-cookie')!.split(';')[0]!;
      const guess = (address = newAddress()) => loginFrom(slow, address, { email: account, password: 'a wrong guess' });
      // One address fails until the waits are long (the 5th failure: 8 s, the next 16 s).
      const first = newAddress();
      for (const wait of [0, 0, 1, 2, 4]) {
        await sleepSeconds(wait);
        expect((await guess(first)).status).toBe(401);
      }
      const statuses = [];
      for (let i = 0; i < 5; i += 1) statuses.push((await guess()).status);
      // The first new address passes the new-address lane (which then waits 16 s); two more get
      // their check; then every new address waits like the rest.
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
      expect((await loginFrom(slow, newAddress(), { email: account, password })).status).toBe(429);
      const withCookie = await call(slow.url, 'POST', '/v1/auth/login', {
        body: { email: account, password },
        headers: { 'x-forwarded-for': newAddress(), cookie: deviceCookie },
      });
      expect(withCookie.status).toBe(200);
    } finally {
      await slow.close();
    }
  });

  test('the delay doubles from 1 s past the free failures, up to the cap', () => {
    expect([10, 11, 12, 13, 19, 20, 50, 10_000].map((n) => delayAfter(n, 10, 300_000))).toEqual([
      0, 1_000, 2_000, 4_000, 256_000, 300_000, 300_000, 300_000,
    ]);
  });
});
