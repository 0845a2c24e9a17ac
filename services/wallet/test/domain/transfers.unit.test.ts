import type { AuthenticatedUser } from '@mkt/kit/http';
import { InvalidField, NotFound } from '@mkt/kit/domain';
import type { TransferDoc, WalletSummary } from '../../src/domain/records';
import { checkTransferParties, checkTransferRequest, retakenTransfer, transferCreditOp, transferDebitOp } from '../../src/domain/transfers';
import { AmountTooLarge, BalanceCeilingExceeded, CurrencyMismatch, InsufficientFunds } from '../../src/domain/errors';

/** The transfer rules (README "Bounded amounts", transfers), without a database. */
const sender: AuthenticatedUser = { id: 'from', ref: 'MKT-USR-from', role: 'buyer', email: 'a@b.c', name: 'A' };
const settings = { referencePrefix: 'MKT', maxAmountMinor: 2000_00, ceilingMinor: 5000_00 };
const wallet = (userId: string, over: Partial<WalletSummary> = {}): WalletSummary =>
  ({ _id: `w-${userId}`, userId, currency: 'ETB', availableMinor: 0, heldMinor: 0, ...over }) as WalletSummary;
const body = (over: Partial<{ toUserId: string; amount: number; currency: string }> = {}) => ({
  toUserId: 'to',
  amount: 100_00,
  currency: 'ETB',
  ...over,
});

describe('a transfer request', () => {
  test.each([
    ['to another user', body(), null],
    ['to oneself', body({ toUserId: 'from' }), InvalidField],
    ['at the maximum', body({ amount: 2000_00 }), null],
    ['over the maximum', body({ amount: 2000_01 }), AmountTooLarge],
  ] as const)('%s: %p', (_name, request, refusal) => {
    const check = () => checkTransferRequest(sender, request, settings);
    if (refusal) expect(check).toThrow(refusal);
    else expect(check).not.toThrow();
  });

  test.each([
    ['both in ETB, room left', wallet('from'), wallet('to', { availableMinor: 4900_00 }), body(), null],
    ['the sender in another currency', wallet('from', { currency: 'USD' }), wallet('to'), body(), CurrencyMismatch],
    ['no recipient wallet', wallet('from'), null, body(), NotFound],
    ['the recipient in another currency', wallet('from'), wallet('to', { currency: 'USD' }), body(), CurrencyMismatch],
    [
      'no room at the recipient (held counts)',
      wallet('from'),
      wallet('to', { availableMinor: 4900_00, heldMinor: 1 }),
      body(),
      BalanceCeilingExceeded,
    ],
  ] as const)('%s: %p', (_name, from, to, request, refusal) => {
    const check = () => checkTransferParties(from, to, request, settings.ceilingMinor);
    if (refusal) expect(check).toThrow(refusal);
    else expect(check()).toBe(to);
  });

  test('a retaken keyed attempt carries its first attempt’s transfer on; a failed one is 422 again', () => {
    const earlier = { _id: 't1', status: 'Debited' } as TransferDoc;
    expect(retakenTransfer(earlier)).toBe(earlier);
    expect(retakenTransfer(null)).toBeNull();
    expect(() => retakenTransfer({ ...earlier, status: 'Failed' })).toThrow(InsufficientFunds);
  });

  test('debit then credit, each once by its op id; only the credit is held to the ceiling', () => {
    const transfer = { _id: 't1', amountMinor: 25_00 };
    expect(transferDebitOp(transfer)).toEqual({
      opId: 'transfer:t1:debit',
      type: 'transfer_debit',
      availableDeltaMinor: -25_00,
      heldDeltaMinor: 0,
      reference: 't1',
    });
    expect(transferCreditOp(transfer, 5000_00)).toEqual({
      opId: 'transfer:t1:credit',
      type: 'transfer_credit',
      availableDeltaMinor: 25_00,
      heldDeltaMinor: 0,
      reference: 't1',
      ceilingMinor: 5000_00,
    });
  });
});
