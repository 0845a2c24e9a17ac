import { AppError } from '@mkt/kit/domain';
import {
  accessClaimsOf,
  adminEmail,
  newUser,
  onUnusableRefreshToken,
  refreshExpiry,
  toAuthUser,
  usableRefreshToken,
} from '../../src/domain/identity';
import {
  addressRefusal,
  countFree,
  countInWindow,
  countPastFree,
  delayAfter,
  laneOf,
  openWindow,
  startAccountCount,
  throttleKeys,
  type AccountState,
} from '../../src/domain/login-throttle';

const settings = {
  maxFailuresPerAddress: 5,
  windowMs: 15 * 60_000,
  freeFailuresPerAccount: 10,
  accountMemoryMs: 24 * 3_600_000,
  maxDelayMs: 300_000,
  freshAddressChecks: 20,
};
const now = new Date('2026-11-24T12:00:00.000Z');
const later = (ms: number) => new Date(now.getTime() + ms);
const user = { _id: 'u1', referenceId: 'MKT-USR-AAAAAAAA', email: 'sara@example.com', fullName: 'Sara T', role: 'buyer' as const };

describe('per account and client address: 5 failures in 15 minutes lock that address out of that account', () => {
  test('an attempt counts in the open window while under the limit; otherwise a new window opens', () => {
    expect(countInWindow(settings, now)).toEqual({
      expect: { windowEndsAt: { after: now }, failures: { below: 5 } },
      add: { failures: 1 },
    });
    expect(openWindow(settings, now)).toEqual({
      expect: { windowEndsAt: { notAfter: now } },
      set: { failures: 1, windowEndsAt: later(15 * 60_000) },
    });
  });

  test.each([
    ['5 failures, window open: locked until it ends', { failures: 5, windowEndsAt: later(90_000) }, 90],
    ['4 failures: not locked (a race: read again)', { failures: 4, windowEndsAt: later(90_000) }, null],
    ['5 failures, window ended: not locked', { failures: 5, windowEndsAt: now }, null],
    ['no record (a race)', null, null],
  ])('%s', (_case, current, retryAfter) => {
    const refusal = addressRefusal(current, settings, now);
    expect(refusal ? { status: refusal.status, retryAfter: Number(refusal.headers['Retry-After']) } : null).toEqual(
      retryAfter === null ? null : { status: 429, retryAfter },
    );
  });

  test('the keys are SHA-256 of the lower-cased email (and the address): nothing tells which emails exist', () => {
    const a = throttleKeys(' Sara@Example.com ', '10.0.0.1');
    expect(a).toEqual(throttleKeys('sara@example.com', '10.0.0.1'));
    expect(a.accountKey).toMatch(/^[0-9a-f]{64}$/);
    expect(a.pairKey).not.toBe(throttleKeys('sara@example.com', '10.0.0.2').pairKey);
    expect(a.accountKey).toBe(throttleKeys('sara@example.com', '10.0.0.2').accountKey);
  });
});

describe('per account, across addresses: past 10 free failures each attempt makes the next one wait', () => {
  test.each([
    [1, 0],
    [10, 0],
    [11, 1_000],
    [12, 2_000],
    [13, 4_000],
    [18, 128_000],
    [19, 256_000],
    [20, 300_000],
    [60, 300_000],
  ])('after failure %i the lane waits %i ms (1 s doubling, capped at 5 minutes)', (failures, ms) => {
    expect(delayAfter(failures, 10, 300_000)).toBe(ms);
  });

  test('two lanes: addresses new to the account, and addresses already failing on it', () => {
    expect(laneOf(true)).toBe('newAddressesAt');
    expect(laneOf(false)).toBe('failingAddressesAt');
  });

  test('below the free failures with the lane open: a plain count, remembered 24 hours', () => {
    expect(countFree(settings, 'newAddressesAt', now)).toEqual({
      expect: { forgetAt: { after: now }, failures: { below: 10 }, newAddressesAt: { notAfter: now } },
      add: { failures: 1 },
      set: { forgetAt: later(24 * 3_600_000) },
    });
    expect(startAccountCount(settings, now).set).toEqual({
      failures: 1,
      forgetAt: later(24 * 3_600_000),
      newAddressesAt: now,
      failingAddressesAt: now,
      freshChecks: 0,
    });
  });

  const account = (over: Partial<AccountState> = {}): AccountState => ({
    failures: 12,
    forgetAt: later(3_600_000),
    newAddressesAt: now,
    failingAddressesAt: later(30_000),
    ...over,
  });

  test('a lane still waiting refuses with Retry-After; the other lane is not held back', () => {
    const refused = countPastFree(account(), settings, 'failingAddressesAt', now);
    expect(refused).toMatchObject({ refusal: { status: 429, headers: { 'Retry-After': '30' } } });
    const admitted = countPastFree(account(), settings, 'newAddressesAt', now);
    expect(admitted).toEqual({
      expect: { failures: { is: 12 }, forgetAt: { is: later(3_600_000) }, newAddressesAt: { is: now } },
      set: { failures: 13, forgetAt: later(24 * 3_600_000), newAddressesAt: later(4_000) },
      gate: later(4_000),
    });
  });

  test('forgotten (or vanished) meanwhile: read again', () => {
    expect(countPastFree(null, settings, 'newAddressesAt', now)).toBe('retry');
    expect(countPastFree(account({ forgetAt: now }), settings, 'newAddressesAt', now)).toBe('retry');
  });
});

describe('identity', () => {
  test('a used refresh token shown again revokes its whole family; an unknown or unused one is only refused', () => {
    expect(onUnusableRefreshToken({ usedAt: now, familyId: 'f1', userId: 'u1' })).toEqual({ revokeFamily: 'f1', userId: 'u1' });
    expect(onUnusableRefreshToken({ usedAt: null, familyId: 'f1', userId: 'u1' })).toBe('refuse');
    expect(onUnusableRefreshToken(null)).toBe('refuse');
  });

  test('a refresh token is usable once, unexpired and unrevoked; it lives the configured days', () => {
    expect(usableRefreshToken(now)).toEqual({ usedAt: null, revokedAt: null, expiresAfter: now });
    expect(refreshExpiry(now, 30)).toEqual(later(30 * 86_400_000));
  });

  test('what a user answers as and what its access token claims', () => {
    expect(toAuthUser({ ...user, passwordHash: 'x' } as never)).toEqual({
      id: 'u1',
      referenceId: 'MKT-USR-AAAAAAAA',
      email: 'sara@example.com',
      fullName: 'Sara T',
      role: 'buyer',
    });
    expect(accessClaimsOf(user)).toEqual({ sub: 'u1', ref: 'MKT-USR-AAAAAAAA', role: 'buyer', email: 'sara@example.com', name: 'Sara T' });
  });

  test('a new user is stored with its identity.user.registered event; the admin’s email is normalised', () => {
    const { user: record, emit } = newUser(
      { email: 'sara@example.com', fullName: 'Sara T', role: 'seller' },
      { id: 'u1', referenceId: 'MKT-USR-AAAAAAAA', passwordHash: '$argon2id$...' },
    );
    expect(record).toEqual({
      _id: 'u1',
      referenceId: 'MKT-USR-AAAAAAAA',
      email: 'sara@example.com',
      passwordHash: '$argon2id$...',
      fullName: 'Sara T',
      role: 'seller',
    });
    expect(emit).toEqual({
      type: 'identity.user.registered',
      data: { userId: 'u1', referenceId: 'MKT-USR-AAAAAAAA', role: 'seller', fullName: 'Sara T', email: 'sara@example.com' },
    });
    expect(adminEmail('  Admin@Example.COM ')).toBe('admin@example.com');
  });

  test('refusals are the kit’s errors (the envelope knows them)', () => {
    const refusal = addressRefusal({ failures: 5, windowEndsAt: later(1_000) }, settings, now);
    expect(refusal).toBeInstanceOf(AppError);
  });
});
