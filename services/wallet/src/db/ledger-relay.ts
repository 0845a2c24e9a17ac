import { drainPendingItems, isDuplicateKey, type Logger } from '@mkt/kit';
import { LedgerEntryModel } from './ledger.model';
import { forgetWalletOp, Wallet, type LedgerEntry, type WalletDoc } from './wallet.model';

const toLedgerDoc = (entry: LedgerEntry) => ({ ...entry, _id: entry.id, createdAt: new Date(entry.createdAt) });

async function appendEntry(entry: LedgerEntry): Promise<void> {
  try {
    await LedgerEntryModel.create(toLedgerDoc(entry));
  } catch (err) {
    if (!isDuplicateKey(err)) throw err; // moved before a crash: it is there already
  }
}

/** Appends entries in one insert; ones already there (moved before a crash, or by a racing move) are kept once. */
async function appendEntries(entries: LedgerEntry[]): Promise<void> {
  try {
    await LedgerEntryModel.collection.insertMany(entries.map(toLedgerDoc) as never[], { ordered: false });
  } catch (err) {
    const writeErrors = (err as { writeErrors?: unknown }).writeErrors;
    const errors = Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : [err];
    if (!errors.every((e) => isDuplicateKey(e) || isDuplicateKey((e as { err?: unknown }).err))) throw err;
  }
}

/**
 * Moves ledger entries written with a balance change (`pendingEntries` of the wallet) to the
 * append-only ledger collection. Right after a change, and by a sweep for what a crash left.
 */
export class LedgerRelay {
  constructor(private readonly log: Logger) {}

  /**
   * After a step: the entries the op's own write answered are appended, then removed from the
   * wallet in one update that also marks the op done (`doneOps`) when `doneOpId` is given —
   * no read. A failure leaves the entries to the sweep and still marks the op done.
   */
  async moveAfterStep(walletId: string, entries: LedgerEntry[], doneOpId?: string): Promise<void> {
    try {
      await appendEntries(entries);
      const pull = { $pull: { pendingEntries: { $in: entries } } };
      if (doneOpId) {
        const marked = await Wallet.collection.updateOne(
          { _id: walletId, 'doneOps.id': { $ne: doneOpId } } as object,
          { ...pull, $push: { doneOps: { id: doneOpId, at: new Date() } } } as object,
        );
        if (marked.matchedCount === 1) return;
      }
      // Marked done already by a racing run of the same step (or nothing to mark): only the pull.
      await Wallet.collection.updateOne({ _id: walletId } as object, pull as object);
    } catch (err) {
      this.log.warn({ err, walletId }, 'ledger move failed; the sweep will retry');
      if (doneOpId) await forgetWalletOp(walletId, doneOpId);
    }
  }

  async flush(walletId: string): Promise<void> {
    try {
      const wallet = await Wallet.findById(walletId, { pendingEntries: 1 }).lean<WalletDoc>();
      if (wallet) await drainPendingItems(Wallet, wallet._id, 'pendingEntries', wallet.pendingEntries, appendEntry);
    } catch (err) {
      this.log.warn({ err, walletId }, 'ledger flush failed; the sweep will retry');
    }
  }

  async sweep(): Promise<void> {
    const wallets = await Wallet.find({ 'pendingEntries.id': { $exists: true } }, { _id: 1 })
      .limit(200)
      .lean<Array<{ _id: string }>>();
    for (const wallet of wallets) await this.flush(wallet._id);
  }
}
