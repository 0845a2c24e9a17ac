import { drainPendingItems, isDuplicateKey, type Logger } from '@mkt/kit';
import type { LedgerEntry, WalletDoc } from '../domain/records';
import type { WalletModels } from './models';

const toLedgerDoc = (entry: LedgerEntry) => ({ ...entry, _id: entry.id, createdAt: new Date(entry.createdAt) });

/**
 * Moves ledger entries written with a balance change (`pendingEntries` of the wallet) to the
 * append-only `ledger_entries`. Right after a change, and by a sweep for what a crash left.
 */
export class LedgerRepository {
  private readonly Wallet: WalletModels['Wallet'];
  private readonly LedgerEntry: WalletModels['LedgerEntry'];

  constructor(
    models: Pick<WalletModels, 'Wallet' | 'LedgerEntry'>,
    private readonly log: Logger,
  ) {
    this.Wallet = models.Wallet;
    this.LedgerEntry = models.LedgerEntry;
  }

  /**
   * After a step: the entries the op's own write answered are appended, then removed from the
   * wallet in one update that also marks the op done (`doneOps`) when `doneOpId` is given —
   * no read. A failure leaves the entries to the sweep and still marks the op done.
   */
  async moveAfterStep(walletId: string, entries: LedgerEntry[], doneOpId?: string, now = new Date()): Promise<void> {
    try {
      await this.appendEntries(entries);
      const pull = { $pull: { pendingEntries: { $in: entries } } };
      if (doneOpId) {
        const marked = await this.Wallet.collection.updateOne(
          { _id: walletId, 'doneOps.id': { $ne: doneOpId } } as object,
          { ...pull, $push: { doneOps: { id: doneOpId, at: now } } } as object,
        );
        if (marked.matchedCount === 1) return;
      }
      // Marked done already by a racing run of the same step (or nothing to mark): only the pull.
      await this.Wallet.collection.updateOne({ _id: walletId } as object, pull as object);
    } catch (err) {
      this.log.warn({ err, walletId }, 'ledger move failed; the sweep will retry');
      if (doneOpId)
        await this.Wallet.updateOne({ _id: walletId, 'doneOps.id': { $ne: doneOpId } }, { $push: { doneOps: { id: doneOpId, at: now } } });
    }
  }

  async flush(walletId: string): Promise<void> {
    try {
      const wallet = await this.Wallet.findById(walletId, { pendingEntries: 1 }).lean<WalletDoc>();
      if (wallet)
        await drainPendingItems(this.Wallet, wallet._id, 'pendingEntries', wallet.pendingEntries, (entry) => this.appendEntry(entry));
    } catch (err) {
      this.log.warn({ err, walletId }, 'ledger flush failed; the sweep will retry');
    }
  }

  async sweep(): Promise<void> {
    const wallets = await this.Wallet.find({ 'pendingEntries.id': { $exists: true } }, { _id: 1 })
      .limit(200)
      .lean<Array<{ _id: string }>>();
    for (const wallet of wallets) await this.flush(wallet._id);
  }

  /** A wallet's entries in the ledger (tests and audits sum them against its balances). */
  async entriesOf(walletId: string): Promise<LedgerEntry[]> {
    const docs = await this.LedgerEntry.find({ walletId }).lean();
    return docs.map(({ _id, createdAt, ...entry }) => ({ ...entry, id: _id, createdAt: createdAt.toISOString() }));
  }

  private async appendEntry(entry: LedgerEntry): Promise<void> {
    try {
      await this.LedgerEntry.create(toLedgerDoc(entry));
    } catch (err) {
      if (!isDuplicateKey(err)) throw err; // moved before a crash: it is there already
    }
  }

  /** Appends entries in one insert; ones already there (moved before a crash, or by a racing move) are kept once. */
  private async appendEntries(entries: LedgerEntry[]): Promise<void> {
    try {
      await this.LedgerEntry.collection.insertMany(entries.map(toLedgerDoc) as never[], { ordered: false });
    } catch (err) {
      const writeErrors = (err as { writeErrors?: unknown }).writeErrors;
      const errors = Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : [err];
      if (!errors.every((e) => isDuplicateKey(e) || isDuplicateKey((e as { err?: unknown }).err))) throw err;
    }
  }
}
