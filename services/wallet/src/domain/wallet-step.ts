import type { LedgerRelay } from '../db/ledger-relay';
import { applyWalletOp, forgetWalletOp, type WalletOp } from '../db/wallet.model';

/**
 * One step of a business operation, in the only safe order: apply it to the wallet (once, by
 * its op id), record it on the owning record, then let the wallet forget the op id and move the
 * ledger entry. A crash anywhere leaves the record saying the step is still to do, and the
 * repeat finds the op applied and changes nothing.
 */
export async function runWalletStep(
  ledger: LedgerRelay,
  walletId: string,
  op: WalletOp,
  recordDone: () => Promise<unknown>,
): Promise<void> {
  await applyWalletOp(walletId, op);
  await recordDone();
  await forgetWalletOp(walletId, op.opId);
  void ledger.flush(walletId);
}
