import { drainPendingItems, isDuplicateKey, type Logger } from '@mkt/kit';
import { LedgerEntryModel } from './ledger.model';
import { Wallet, type LedgerEntry, type WalletDoc } from './wallet.model';

async function appendEntry(entry: LedgerEntry): Promise<void> {
  try {
    await LedgerEntryModel.create({ ...entry, _id: entry.id, createdAt: new Date(entry.createdAt) });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err; // moved before a crash: it is there already
  }
}

/**
 * Moves ledger entries written with a balance change (`pendingEntries` of the wallet) to the
 * append-only ledger collection. Right after a change, and by a sweep for what a crash left.
 */
export class LedgerRelay {
  constructor(private readonly log: Logger) {}

  async flush(walletId: string): Promise<void> {
    try {
      const wallet = await Wallet.findById(walletId, { pendingEntries: 1 }).lean<WalletDoc>();
      if (wallet) await drainPendingItems(Wallet, wallet._id, 'pendingEntries', wallet.pendingEntries, appendEntry);
    } catch (err) {
      this.log.warn({ err: (err as Error).message, walletId }, 'ledger flush failed; the sweep will retry');
    }
  }

  async sweep(): Promise<void> {
    const wallets = await Wallet.find({ 'pendingEntries.id': { $exists: true } }, { _id: 1 })
      .limit(200)
      .lean<Array<{ _id: string }>>();
    for (const wallet of wallets) await this.flush(wallet._id);
  }
}
