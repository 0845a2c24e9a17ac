import type { TopUpStatus } from '@mkt/contracts';
import type { TopUpDoc } from '../../src/domain/records';
import { redirectAllowed } from '../../src/domain/redirects';
import {
  askProvider,
  checkoutLookup,
  checkTopUpFits,
  checkTopUpRequest,
  hashToken,
  isExpired,
  returnTarget,
  verdictOf,
  type TopUpSettings,
} from '../../src/domain/topups';
import { AmountTooLarge, BalanceCeilingExceeded, RedirectNotAllowed } from '../../src/domain/errors';

/** The top-up rules (README "States", "Bounded amounts", "No open redirect"), without a database. */
const now = new Date('2026-11-24T10:00:00.000Z');
const settings: TopUpSettings = {
  referencePrefix: 'MKT',
  expiryMinutes: 30,
  publicUrl: 'http://localhost:8080',
  maxAmountMinor: 2000_00,
  ceilingMinor: 5000_00,
  redirectOrigins: ['https://shop.example'],
};

const topUp = (over: Partial<TopUpDoc> = {}): TopUpDoc => ({
  _id: 't1',
  referenceId: 'MKT-TOP-UP-1',
  walletId: 'w1',
  userId: 'u1',
  amountMinor: 150_50,
  currency: 'ETB',
  paymentMethod: 'Chapa',
  provider: 'sandbox',
  status: 'Processing',
  paymentUrl: '',
  redirectUrl: 'https://shop.example/after',
  notes: null,
  checkoutTokenHash: hashToken('checkout-token'),
  returnTokenHash: hashToken('return-token'),
  expiresAt: new Date(now.getTime() + 60_000),
  completedAt: null,
  credit: 'none',
  pendingEvents: [],
  createdAt: now,
  updatedAt: now,
  ...over,
});

describe('a top-up request', () => {
  test.each([
    [2000_00, 'https://shop.example/x', null],
    [2000_01, 'https://shop.example/x', AmountTooLarge],
    [100, 'https://evil.example/x', RedirectNotAllowed],
  ] as const)('%i to %s: %p', (amountMinor, redirectUrl, refusal) => {
    const check = () => checkTopUpRequest({ amountMinor, redirectUrl }, settings);
    if (refusal) expect(check).toThrow(refusal);
    else expect(check).not.toThrow();
  });

  test('must fit under the wallet’s ceiling, held money included', () => {
    expect(() => checkTopUpFits({ availableMinor: 4000_00, heldMinor: 0 }, 1000_00, 5000_00)).not.toThrow();
    expect(() => checkTopUpFits({ availableMinor: 4000_00, heldMinor: 1 }, 1000_00, 5000_00)).toThrow(BalanceCeilingExceeded);
  });
});

describe('where a payer may be sent back (redirectAllowed)', () => {
  test.each([
    ['https://shop.example/after', ['https://shop.example'], true],
    ['https://shop.example:8443/after', ['https://shop.example'], false],
    ['https://shop.example.evil.test/', ['https://shop.example'], false],
    ['https://user:pw@shop.example/', ['https://shop.example'], false],
    ['javascript:alert(1)', ['https://shop.example'], false],
    ['not a url', ['https://shop.example'], false],
    ['http://localhost:3000/back', [], true], // the list empty: localhost only (development)
    ['http://127.0.0.1/back', [], true],
    ['https://shop.example/after', [], false],
  ] as const)('%s with %p: %s', (url, origins, allowed) => {
    expect(redirectAllowed(url, origins)).toBe(allowed);
  });
});

describe('what the checkout link opens to (checkoutLookup)', () => {
  test.each([
    ['open', topUp(), 'checkout-token', 'open'],
    ['a wrong token', topUp(), 'guess', 'unknown'],
    ['past its expiry', topUp({ expiresAt: now }), 'checkout-token', 'expired'],
    ['expired already', topUp({ status: 'Expired' }), 'checkout-token', 'expired'],
    ['completed', topUp({ status: 'Completed' }), 'checkout-token', 'used'],
    ['cancelled', topUp({ status: 'Cancelled' }), 'checkout-token', 'used'],
    ['another provider’s', topUp({ provider: 'chapa' }), 'checkout-token', 'unknown'],
    ['no such top-up', null, 'checkout-token', 'unknown'],
  ] as const)('%s → %s', (_name, record, token, kind) => {
    expect(checkoutLookup(record, token, now).kind).toBe(kind);
  });
});

describe('where /return sends the payer (returnTarget)', () => {
  test.each([
    ['the return token, an allowed origin', topUp(), 'return-token', ['https://shop.example'], 'redirect'],
    ['the origin no longer allowed', topUp(), 'return-token', ['https://other.example'], 'page'],
    ['the checkout token instead', topUp(), 'checkout-token', ['https://shop.example'], 'unknown'],
    ['no token', topUp(), undefined, ['https://shop.example'], 'unknown'],
    ['no such top-up', null, 'return-token', ['https://shop.example'], 'unknown'],
  ] as const)('%s → %s', (_name, record, token, origins, kind) => {
    expect(returnTarget(record, token, origins).kind).toBe(kind);
  });
});

describe('what the provider’s answer means (a webhook is only a hint to ask)', () => {
  test.each([
    ['success', 150_50, 'ETB', 'complete'],
    ['success', 150_50, null, 'complete'],
    ['success', 150_00, 'ETB', 'review'],
    ['success', 150_50, 'USD', 'review'],
    ['failed', null, null, 'fail'],
    ['pending', null, null, 'wait'],
  ] as const)('%s of %p %p → %s', (status, amountMinor, currency, verdict) => {
    expect(verdictOf(topUp(), { status, amountMinor, currency })).toBe(verdict);
  });

  test.each([
    ['chapa', 'Processing', true],
    ['chapa', 'Expired', true], // paid after all: completed
    ['chapa', 'Completed', false],
    ['chapa', 'Failed', false],
    ['sandbox', 'Processing', false],
  ] as const)('a %s top-up %s is asked about: %s', (provider, status, asked) => {
    expect(askProvider({ provider, status: status as TopUpStatus }, 'chapa')).toBe(asked);
  });

  test('a top-up still Processing past its expiry ends Expired', () => {
    expect(isExpired(topUp({ expiresAt: now }), now)).toBe(true);
    expect(isExpired(topUp(), now)).toBe(false);
    expect(isExpired(topUp({ status: 'Completed', expiresAt: now }), now)).toBe(false);
  });
});
