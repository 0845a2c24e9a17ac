import type { WalletOp } from '../../src/domain/records';
import { appliedOnce, boundedOp, escrowOf, fitsUnder, HARD_CEILING_MINOR, ledgerEntryOf, refusalOf } from '../../src/domain/wallet-ops';
import { BalanceCeilingExceeded, InsufficientFunds } from '../../src/domain/errors';

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

describe('why the write that takes an op into flight matched no wallet (refusalOf)', () => {
  const wallet = (availableMinor: number, heldMinor: number, inflightInMinor = 0, inflightOutMinor = 0) => ({
    availableMinor,
    heldMinor,
    inflightInMinor,
    inflightOutMinor,
  });

  test.each([
    ['short of available', 'insufficient_funds', wallet(4, 0), op({ availableDeltaMinor: -5 })],
    ['short of held', 'insufficient_funds', wallet(10, 4), op({ availableDeltaMinor: 5, heldDeltaMinor: -5 })],
    ['a credit with no room', 'ceiling_exceeded', wallet(10, 0), op({ availableDeltaMinor: 5, ceilingMinor: 14 })],
    ['room taken by a credit in flight', 'ceiling_exceeded', wallet(5, 0, 5), op({ availableDeltaMinor: 5, ceilingMinor: 14 })],
    [
      'room taken by what a debit in flight took (a rollback gives it back)',
      'ceiling_exceeded',
      wallet(5, 0, 0, 5),
      op({ availableDeltaMinor: 5, ceilingMinor: 14 }),
    ],
    ['no such wallet', 'insufficient_funds', null, op({ availableDeltaMinor: 5 })],
    ['the guards pass on this read: take it again', null, wallet(10, 0, 2, 2), op({ availableDeltaMinor: -5 })],
    ['a credit that fits, counting the ops in flight', null, wallet(5, 0, 2, 2), op({ availableDeltaMinor: 5, ceilingMinor: 14 })],
  ] as const)('%s → %s', (_name, outcome, stored, given) => {
    expect(refusalOf(stored, given)).toBe(outcome);
  });
});

describe('an op moves a wallet in two writes (escrowOf): what it takes at once, what it adds at the commit', () => {
  test.each([
    [
      'a debit',
      op({ availableDeltaMinor: -5 }),
      { takeAvailableMinor: 5, takeHeldMinor: 0, addAvailableMinor: 0, addHeldMinor: 0, inMinor: 0, outMinor: 5 },
    ],
    [
      'a credit',
      op({ availableDeltaMinor: 5 }),
      { takeAvailableMinor: 0, takeHeldMinor: 0, addAvailableMinor: 5, addHeldMinor: 0, inMinor: 5, outMinor: 0 },
    ],
    [
      'a hold',
      op({ availableDeltaMinor: -5, heldDeltaMinor: 5 }),
      { takeAvailableMinor: 5, takeHeldMinor: 0, addAvailableMinor: 0, addHeldMinor: 5, inMinor: 5, outMinor: 5 },
    ],
    [
      'a release with a refund',
      op({ availableDeltaMinor: 3, heldDeltaMinor: -5 }),
      { takeAvailableMinor: 0, takeHeldMinor: 5, addAvailableMinor: 3, addHeldMinor: 0, inMinor: 3, outMinor: 5 },
    ],
  ] as const)('%s', (_name, given, moves) => {
    const escrow = escrowOf(given);
    expect(escrow).toEqual(moves);
    // Taken then added is the op's deltas exactly; taken then given back is nothing.
    expect(escrow.addAvailableMinor - escrow.takeAvailableMinor).toBe(given.availableDeltaMinor);
    expect(escrow.addHeldMinor - escrow.takeHeldMinor).toBe(given.heldDeltaMinor);
  });
});

describe('an outcome as a step sees it (appliedOnce)', () => {
  test('applied: true; a repeat: false; a refusal: its error', () => {
    expect(appliedOnce({ kind: 'applied' })).toBe(true);
    expect(appliedOnce({ kind: 'repeat' })).toBe(false);
    expect(() => appliedOnce({ kind: 'insufficient_funds' })).toThrow(InsufficientFunds);
    expect(() => appliedOnce({ kind: 'ceiling_exceeded' })).toThrow(BalanceCeilingExceeded);
  });

  test('the ledger entry of an op is keyed by its op id (inserted once, ever)', () => {
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
