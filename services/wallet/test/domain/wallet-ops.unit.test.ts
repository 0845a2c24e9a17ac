import type { WalletOp } from '../../src/domain/records';
import { appliedEntries, boundedOp, fitsUnder, HARD_CEILING_MINOR, ledgerEntryOf, refusalOf } from '../../src/domain/wallet-ops';
import { BalanceCeilingExceeded, InsufficientFunds } from '../../src/domain/wallet.errors';

/** The wallet's money rules (README "Money", "Bounded amounts"), without a database. */
const op = (over: Partial<WalletOp> = {}): WalletOp => ({
  opId: 'op-1',
  type: 'topup_credit',
  availableDeltaMinor: 0,
  heldDeltaMinor: 0,
  reference: 'ref',
  ...over,
});

describe('an op is bounded before it reaches a wallet (boundedOp)', () => {
  test.each([2 ** 53, -(2 ** 53), 1.5, Number.NaN, HARD_CEILING_MINOR + 1, -(HARD_CEILING_MINOR + 1)])(
    'a delta of %d is refused: RangeError',
    (delta) => {
      expect(() => boundedOp(op({ availableDeltaMinor: delta }))).toThrow(RangeError);
      expect(() => boundedOp(op({ heldDeltaMinor: delta }))).toThrow(RangeError);
    },
  );

  test.each([
    [undefined, HARD_CEILING_MINOR],
    [5000_00, 5000_00],
    [HARD_CEILING_MINOR * 2, HARD_CEILING_MINOR],
  ])('its ceiling %s is held to %d (never above the hard ceiling)', (ceiling, expected) => {
    expect(boundedOp(op({ availableDeltaMinor: 1, ceilingMinor: ceiling })).ceilingMinor).toBe(expected);
  });
});

describe('why a guarded write matched no wallet (refusalOf)', () => {
  const wallet = (availableMinor: number, heldMinor: number, appliedOps: string[] = []) => ({ availableMinor, heldMinor, appliedOps });

  test.each([
    ['applied before', wallet(0, 0, ['op-1']), op({ availableDeltaMinor: -5 }), 'repeat'],
    ['short of available', wallet(4, 0), op({ availableDeltaMinor: -5 }), 'insufficient_funds'],
    ['short of held', wallet(10, 4), op({ availableDeltaMinor: 5, heldDeltaMinor: -5 }), 'insufficient_funds'],
    ['a credit with no room', wallet(10, 0), op({ availableDeltaMinor: 5 }), 'ceiling_exceeded'],
    ['no such wallet', null, op({ availableDeltaMinor: 5 }), 'insufficient_funds'],
  ] as const)('%s → %s', (_name, stored, given, outcome) => {
    expect(refusalOf(stored === null ? null : { ...stored, appliedOps: [...stored.appliedOps] }, given)).toBe(outcome);
  });
});

describe('an outcome as a step sees it (appliedEntries)', () => {
  test('applied: the pending entries; a repeat: null; a refusal: its error', () => {
    const entries = [ledgerEntryOf('w1', op({ availableDeltaMinor: 5 }), new Date(0))];
    expect(appliedEntries({ kind: 'applied', pendingEntries: entries })).toBe(entries);
    expect(appliedEntries({ kind: 'repeat' })).toBeNull();
    expect(() => appliedEntries({ kind: 'insufficient_funds' })).toThrow(InsufficientFunds);
    expect(() => appliedEntries({ kind: 'ceiling_exceeded' })).toThrow(BalanceCeilingExceeded);
  });

  test('the ledger entry of an op is keyed by its op id (moved twice, kept once)', () => {
    expect(ledgerEntryOf('w1', op({ availableDeltaMinor: 5, heldDeltaMinor: -5 }), new Date(0))).toEqual({
      id: 'op-1',
      walletId: 'w1',
      type: 'topup_credit',
      availableDeltaMinor: 5,
      heldDeltaMinor: -5,
      reference: 'ref',
      createdAt: '1970-01-01T00:00:00.000Z',
    });
  });
});

describe('a balance stays under its ceiling (fitsUnder: available + held + credit ≤ ceiling)', () => {
  test.each([
    [4000_00, 0, 1000_00, 5000_00, true],
    [4000_00, 0, 1000_01, 5000_00, false],
    [3000_00, 2000_00, 1, 5000_00, false], // held money counts
    [0, 0, 5000_00, 5000_00, true],
  ])('%i available + %i held + %i under %i: %s', (available, held, credit, ceiling, fits) => {
    expect(fitsUnder({ availableMinor: available, heldMinor: held }, credit, ceiling)).toBe(fits);
  });
});
