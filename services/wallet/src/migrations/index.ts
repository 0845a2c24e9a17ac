import type { Migration } from '@mkt/kit';
import type { LedgerRepository } from '../db/ledger.repository';
import { indexes } from './0001-indexes';
import { walletOpsLedger } from './0002-wallet-ops-ledger';

/** The wallet database's migrations, in order (services/wallet/README.md lists them). */
export function walletMigrations(ledger: Pick<LedgerRepository, 'migrateLegacy'>): Migration[] {
  return [indexes, walletOpsLedger(ledger)];
}
