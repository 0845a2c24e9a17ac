import type { CreateTransferBody } from '@mkt/contracts/wallet';
import type { AuthenticatedUser } from '@mkt/kit/http';
import { InvalidField, NotFound } from '@mkt/kit/domain';
import type { TransferDoc, WalletOp, WalletSummary } from './records';
import { fitsUnder } from './wallet-ops';
import { AmountTooLarge, BalanceCeilingExceeded, CurrencyMismatch, InsufficientFunds } from './errors';

/**
 * A transfer is a record with two idempotent steps, debit then credit, each recorded on the
 * record after it is applied (`Pending → Debited → Completed`, or `Failed` when the debit is
 * refused). A crash between them leaves the record Pending or Debited, and the runner carries
 * it on; money is never created (no credit without its debit) nor lost.
 */
export interface TransferSettings {
  referencePrefix: string;
  maxAmountMinor: number;
  ceilingMinor: number;
}

/** A transfer left Pending or Debited this long is carried on by the sweep (a live request is done by then). */
export const TRANSFER_RESUME_GRACE_MS = 10_000;

/** A transfer request before any wallet is read: to another user, within the maximum. */
export function checkTransferRequest(user: AuthenticatedUser, body: CreateTransferBody, settings: TransferSettings): void {
  if (body.toUserId === user.id) throw new InvalidField('A transfer goes to another user', 'toUserId');
  if (body.amount > settings.maxAmountMinor) throw new AmountTooLarge(settings.maxAmountMinor);
}

/** The sender's wallet holds the transfer's currency (checked before the recipient is read). */
export function checkTransferSender(from: WalletSummary, body: CreateTransferBody): WalletSummary {
  if (from.currency !== body.currency) throw new CurrencyMismatch(from.currency);
  return from;
}

/**
 * The two wallets, checked before any money moves: both in the transfer's currency, the
 * recipient's there and with room under the ceiling. The credit's own guard still holds under a
 * race, and a credit that then finds no room stays owed (Debited) until the sweep can apply it.
 */
export function checkTransferParties(
  from: WalletSummary,
  to: WalletSummary | null,
  body: CreateTransferBody,
  ceilingMinor: number,
): WalletSummary {
  if (from.currency !== body.currency) throw new CurrencyMismatch(from.currency);
  if (!to) throw new NotFound('Recipient wallet');
  if (to.currency !== body.currency) throw new CurrencyMismatch(to.currency);
  if (!fitsUnder(to, body.amount, ceilingMinor)) throw new BalanceCeilingExceeded('The recipient’s balance would pass its ceiling');
  return to;
}

/** What a retaken keyed attempt does with the transfer its first attempt made (if any). */
export function retakenTransfer(earlier: TransferDoc | null): TransferDoc | null {
  if (earlier?.status === 'Failed') throw new InsufficientFunds();
  return earlier;
}

export const transferDebitOp = (transfer: Pick<TransferDoc, '_id' | 'amountMinor'>): WalletOp => ({
  opId: `transfer:${transfer._id}:debit`,
  type: 'transfer_debit',
  availableDeltaMinor: -transfer.amountMinor,
  heldDeltaMinor: 0,
  reference: transfer._id,
});

export const transferCreditOp = (transfer: Pick<TransferDoc, '_id' | 'amountMinor'>, ceilingMinor: number): WalletOp => ({
  opId: `transfer:${transfer._id}:credit`,
  type: 'transfer_credit',
  availableDeltaMinor: transfer.amountMinor,
  heldDeltaMinor: 0,
  reference: transfer._id,
  ceilingMinor,
});
