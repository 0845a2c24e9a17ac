import type { Migration } from '@mkt/kit/db';
import type { LedgerRepository } from '../db/ledger.repository';
import type { WalletModels } from '../db/models';
import { indexes } from './0001-indexes';
import { walletOpsLedger } from './0002-wallet-ops-ledger';
import { statementIndexes } from './0003-statement-indexes';
import { ledgerChains } from './0004-ledger-chains';
import { readIndexes } from './0005-read-indexes';

/** The wallet database's migrations, in order (services/wallet/README.md lists them). */
export function walletMigrations(ledger: LedgerRepository, models: Pick<WalletModels, 'LedgerEntry'>): Migration[] {
  return [indexes, walletOpsLedger(ledger), statementIndexes, ledgerChains(models, ledger), readIndexes];
}
