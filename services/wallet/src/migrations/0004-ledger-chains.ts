import type { Migration } from '@mkt/kit/db';
import { backfillLedgerChains } from '../db/ledger-chain.backfill';
import type { LedgerRepository } from '../db/ledger.repository';
import type { WalletModels } from '../db/models';

/**
 * Numbers the ledger entries written before the chain existed (each wallet's entries in the order
 * they were written, with the balances after each), so the statement shows them. Idempotent and
 * safe beside live ops. Entries a process of the previous release writes during the rollout are
 * numbered by running it again once the rollout is over: `down` forgets only that it ran (the
 * numbers stay: they are true), then `up` (services/wallet/README.md, "Migrations").
 */
export function ledgerChains(models: Pick<WalletModels, 'LedgerEntry'>, ledger: LedgerRepository): Migration {
  return {
    name: '0004-ledger-chains',
    up: async ({ log }) => {
      const numbered = await backfillLedgerChains(models, ledger);
      log.info({ entries: numbered }, 'ledger entries written before the chain numbered');
    },
    down: async () => {},
    // 0.2.0's and 0.2.1's compiled code (one checksum) named the backfill's module by its former
    // file name: the same work. Delete this when up or down change what they do.
    formerChecksums: ['11bbee743b7d8e1c'],
  };
}
