import type { LedgerRelay } from '../db/ledger-relay';
import { applyWalletOp, forgetWalletOp, type LedgerEntry, type WalletOp } from '../db/wallet.model';
import { BalanceCeilingExceeded, InsufficientFunds } from './wallet.errors';

/**
 * Applies an op to a wallet (once, by its op id). Answers the wallet's pending ledger entries
 * when this call applied it, null for a repeat; a refusal is InsufficientFunds or
 * BalanceCeilingExceeded and changes nothing.
 */
export async function applyOp(walletId: string, op: WalletOp): Promise<LedgerEntry[] | null> {
  const outcome = await applyWalletOp(walletId, op);
  if (outcome.kind === 'applied') return outcome.pendingEntries;
  if (outcome.kind === 'repeat') return null;
  if (outcome.kind === 'ceiling_exceeded') throw new BalanceCeilingExceeded();
  throw new InsufficientFunds();
}

/**
 * One step of a business operation, in the only safe order: apply it to the wallet (once, by
 * its op id), record it on the owning record, then move the ledger entry and let the wallet
 * forget the op id (one update after the ledger insert). A crash anywhere leaves the record
 * saying the step is still to do, and the repeat finds the op applied and changes nothing.
 */
export async function runWalletStep(
  ledger: LedgerRelay,
  walletId: string,
  op: WalletOp,
  recordDone: () => Promise<unknown>,
): Promise<void> {
  const entries = await applyOp(walletId, op);
  await recordDone();
  if (entries) await ledger.moveAfterStep(walletId, entries, op.opId);
  else await forgetWalletOp(walletId, op.opId); // a repeat: the sweep moves what is left
}
