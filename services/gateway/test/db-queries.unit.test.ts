import { auditQuery } from '../src/db/audit-entry.repository';
import { guardedFilter, guardedUpdate } from '../src/db/login-throttle.repository';
import { usableFilter } from '../src/db/refresh-token.repository';
import { countFree, countFreshCheck, countInWindow, countPastFree, openWindow, startAccountCount } from '../src/domain/login-throttle';

/** The domain's decisions as the driver's filters: what the repositories send, without a database. */
const at = new Date('2026-11-24T10:00:00.000Z');

describe('audit selections', () => {
  test('the fields as given, `at` in [from, to)', () => {
    const from = new Date('2026-11-01T00:00:00.000Z');
    const to = new Date('2026-12-01T00:00:00.000Z');
    expect(auditQuery({ action: 'payout.reject', targetId: 'X', from, to })).toEqual({
      action: 'payout.reject',
      targetId: 'X',
      at: { $gte: from, $lt: to },
    });
    expect(auditQuery({ from })).toEqual({ at: { $gte: from } });
    expect(auditQuery({})).toEqual({});
  });
  test('a page continues strictly after its cursor (time, then id, newest first)', () => {
    expect(auditQuery({ actorId: 'a1', after: { at, id: 'e1' } })).toEqual({
      actorId: 'a1',
      $or: [{ at: { $lt: at } }, { at, _id: { $lt: 'e1' } }],
    });
  });
});

describe('refresh tokens', () => {
  test('usable: unused, unrevoked, expiring after now', () => {
    expect(usableFilter('h', { usedAt: null, revokedAt: null, expiresAfter: at })).toEqual({
      tokenHash: 'h',
      usedAt: null,
      revokedAt: null,
      expiresAt: { $gt: at },
    });
  });
});

describe('the login throttle', () => {
  const settings = {
    maxFailuresPerAddress: 5,
    windowMs: 15 * 60_000,
    freeFailuresPerAccount: 10,
    accountMemoryMs: 24 * 3_600_000,
    maxDelayMs: 15 * 60_000,
    freshAddressChecks: 20,
  };
  const later = (ms: number) => new Date(at.getTime() + ms);

  test('an address: counted in its open window under the limit, or a new window opened', () => {
    const count = countInWindow(settings, at);
    expect(guardedFilter('k', count)).toEqual({ _id: 'k', windowEndsAt: { $gt: at }, failures: { $lt: 5 } });
    expect(guardedUpdate(count)).toEqual({ $inc: { failures: 1 } });
    const open = openWindow(settings, at);
    expect(guardedFilter('k', open)).toEqual({ _id: 'k', windowEndsAt: { $lte: at } });
    expect(guardedUpdate(open)).toEqual({ $set: { failures: 1, windowEndsAt: later(15 * 60_000) } });
  });

  test('an account: the free count on its lane, its start, a fresh check, the compare-and-set past the free ones', () => {
    const free = countFree(settings, 'newAddressesAt', at);
    expect(guardedFilter('k', free)).toEqual({ _id: 'k', forgetAt: { $gt: at }, failures: { $lt: 10 }, newAddressesAt: { $lte: at } });
    expect(guardedUpdate(free)).toEqual({ $inc: { failures: 1 }, $set: { forgetAt: later(24 * 3_600_000) } });
    const start = startAccountCount(settings, at);
    expect(guardedFilter('k', start)).toEqual({ _id: 'k', forgetAt: { $lte: at } });
    expect(guardedUpdate(start)).toEqual({
      $set: { failures: 1, forgetAt: later(24 * 3_600_000), newAddressesAt: at, failingAddressesAt: at, freshChecks: 0 },
    });
    const fresh = countFreshCheck(settings, at);
    expect(guardedFilter('k', fresh)).toEqual({
      _id: 'k',
      forgetAt: { $gt: at },
      $or: [{ freshChecks: { $exists: false } }, { freshChecks: { $lt: 20 } }],
    });
    expect(guardedUpdate(fresh)).toEqual({ $inc: { failures: 1, freshChecks: 1 }, $set: { forgetAt: later(24 * 3_600_000) } });
    const current = { failures: 12, forgetAt: later(3_600_000), newAddressesAt: at, failingAddressesAt: later(30_000) };
    const past = countPastFree(current, settings, 'newAddressesAt', at);
    if (past === 'retry' || 'refusal' in past) throw new Error('expected a write');
    expect(guardedFilter('k', past)).toEqual({ _id: 'k', failures: 12, forgetAt: later(3_600_000), newAddressesAt: at });
    expect(guardedUpdate(past)).toEqual({ $set: { failures: 13, forgetAt: later(24 * 3_600_000), newAddressesAt: later(4_000) } });
  });
});
