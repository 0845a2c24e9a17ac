import { randomBytes } from 'node:crypto';
import {
  cookieValue,
  deviceCookieHeader,
  deviceCookieSecret,
  issueDeviceCookie,
  readDeviceCookie,
  type SecretStore,
} from '../../src/credentials/device-cookie';
import { countFreshCheck, isNewAddress } from '../../src/domain/login-throttle';

const settings = { secret: randomBytes(32), maxAgeMs: 86_400_000 };

/** A store as the gateway's database keeps it: the first value made is the one every later ask reads. */
function memoryStore(): SecretStore & { made: number } {
  const values = new Map<string, string>();
  return {
    made: 0,
    async getOrCreate(name, make) {
      if (!values.has(name)) {
        this.made += 1;
        values.set(name, make());
      }
      return values.get(name)!;
    },
  };
}
const now = new Date('2026-11-26T12:00:00.000Z');
const later = (ms: number) => new Date(now.getTime() + ms);

describe('the known-device cookie', () => {
  test('names the account and a device, and reads back while valid; the device id is kept when issued again', () => {
    const value = issueDeviceCookie('account-key', settings, now);
    const read = readDeviceCookie(value, settings, later(1000));
    expect(read).toMatchObject({ accountKey: 'account-key', issuedAt: now.getTime() });
    expect(readDeviceCookie(issueDeviceCookie('account-key', settings, now, read!.deviceId), settings, now)!.deviceId).toBe(read!.deviceId);
  });

  test.each([
    ['a changed payload', (v: string) => `${Buffer.from('{"a":"other","d":"x","t":1}').toString('base64url')}.${v.split('.')[1]}`],
    ['a changed signature', (v: string) => `${v.slice(0, -2)}AA`],
    ['no signature', (v: string) => v.split('.')[0]!],
    ['extra parts', (v: string) => `${v}.x`],
    ['another key', (v: string) => v, { secret: randomBytes(32), maxAgeMs: 86_400_000 }],
  ])('%s is no device cookie', (_case, change, readWith = settings) => {
    expect(readDeviceCookie(change(issueDeviceCookie('account-key', settings, now)), readWith, now)).toBeNull();
  });

  test('expires after its lifetime (and one from the future is refused)', () => {
    const value = issueDeviceCookie('account-key', settings, now);
    expect(readDeviceCookie(value, settings, later(86_400_001))).toBeNull();
    expect(readDeviceCookie(value, settings, later(-1))).toBeNull();
    expect(readDeviceCookie(undefined, settings, now)).toBeNull();
  });

  test('unset, the secret is 256 random bits made once and read back by every replica; never the signing key', async () => {
    const store = memoryStore();
    const first = await deviceCookieSecret(undefined, store);
    expect(first).toHaveLength(32);
    expect((await deviceCookieSecret(undefined, store)).equals(first)).toBe(true);
    expect(store.made).toBe(1);
    expect((await deviceCookieSecret(undefined, memoryStore())).equals(first)).toBe(false);
  });

  test('a configured secret is used as it is; the header is HttpOnly, SameSite=Strict, for the sign-in path only', async () => {
    const store = memoryStore();
    expect((await deviceCookieSecret('x'.repeat(32), store)).toString()).toBe('x'.repeat(32));
    expect(store.made).toBe(0);
    expect(deviceCookieHeader('v.s', settings, true)).toBe(
      'mkt_device=v.s; Max-Age=86400; Path=/v1/auth/login; HttpOnly; SameSite=Strict; Secure',
    );
    expect(cookieValue('a=1; mkt_device=v.s; b=2', 'mkt_device')).toBe('v.s');
    expect(cookieValue(undefined, 'mkt_device')).toBeUndefined();
  });
});

describe('addresses failing on an account, and fresh-address checks', () => {
  test('an address is new until one of its attempts passed the gates, and again once that is forgotten', () => {
    expect(isNewAddress(null, now)).toBe(true);
    expect(isNewAddress({ failingUntil: undefined }, now)).toBe(true);
    expect(isNewAddress({ failingUntil: later(1) }, now)).toBe(false);
    expect(isNewAddress({ failingUntil: now }, now)).toBe(true);
  });

  test('a fresh-address check is counted as a failure while the account has checks left', () => {
    const rule = countFreshCheck(
      { maxFailuresPerAddress: 5, windowMs: 1, freeFailuresPerAccount: 1, accountMemoryMs: 10, maxDelayMs: 1, freshAddressChecks: 20 },
      now,
    );
    expect(rule.expect).toMatchObject({ freshChecks: { below: 20, orAbsent: true } });
    expect(rule.add).toEqual({ failures: 1, freshChecks: 1 });
  });
});
