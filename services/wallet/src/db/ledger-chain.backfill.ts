import type { LedgerRepository } from './ledger.repository';
import type { WalletModels } from './models';

/**
 * Numbers every wallet's ledger entries written before the chain (README "Statement"), a wallet
 * at a time: wallets with an entry without `seq` are found by the ledger's own index, each
 * backfilled (idempotent, safe beside live ops). Answers how many entries it numbered. To run
 * once after this release is out everywhere (no process of the previous release left).
 */
export async function backfillLedgerChains(models: Pick<WalletModels, 'LedgerEntry'>, ledger: LedgerRepository): Promise<number> {
  const walletIds = await models.LedgerEntry.distinct('walletId', { seq: { $exists: false } });
  let numbered = 0;
  for (const walletId of walletIds) numbered += await ledger.backfillChain(walletId);
  return numbered;
}
