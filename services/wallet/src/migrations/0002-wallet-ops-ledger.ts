import type { Migration } from '@mkt/kit/db';
import type { LedgerRepository } from '../db/ledger.repository';

/**
 * Wallets still in the previous protocol's form (op ids in `appliedOps`, entries in
 * `pendingEntries`, `doneOps`) move to the ledger: fenced (`appliedOps: false`), their entries
 * inserted (one there already is kept once), the arrays unset — 200 a batch until none is left.
 * Each wallet's move is idempotent, so a run cut off is finished by the next. A wallet a process of
 * the previous release opens during the rollout is moved by the first op that reaches it.
 *
 * Irreversible: the previous release reads `appliedOps: false` as a wallet it cannot write to,
 * which is what keeps it from applying an op twice; there is no form to go back to.
 */
export function walletOpsLedger(ledger: Pick<LedgerRepository, 'migrateLegacy'>): Migration {
  return {
    name: '0002-wallet-ops-ledger',
    up: async ({ log }) => {
      let moved = 0;
      for (let batch = await ledger.migrateLegacy(); batch > 0; batch = await ledger.migrateLegacy()) moved += batch;
      log.info({ wallets: moved }, 'wallets of the previous protocol moved to the ledger');
    },
  };
}
