import { isDuplicateKey, type Logger } from '@mkt/kit';
import type { InflightOp, LedgerEntry } from '../domain/records';
import type { WalletModels } from './models';
import type { WalletRepository } from './wallet.repository';

const toLedgerDoc = (entry: LedgerEntry | InflightOp) => ({ ...entry, _id: entry.id, createdAt: new Date(entry.createdAt) });

/**
 * The append-only `ledger_entries`, keyed by op id: an op's entry is inserted once, ever, and
 * that insert is what decides the op applied (see `decide`). With the wallet's in-flight ops it
 * finishes an op whichever run gets there: the one that took it into flight, a repeat of its
 * step, or the sweep after a crash.
 */
export class LedgerRepository {
  private readonly LedgerEntry: WalletModels['LedgerEntry'];

  constructor(
    models: Pick<WalletModels, 'LedgerEntry'>,
    private readonly wallets: WalletRepository,
    private readonly log: Logger,
  ) {
    this.LedgerEntry = models.LedgerEntry;
  }

  /**
   * Does this in-flight op apply? Its entry is inserted with the run's token; the unique op id
   * lets exactly one insert of an op ever succeed, so the answer is true for the run whose token
   * the entry carries (on every ask: an insert that lost a race, or a retry, reads it back) and
   * false for every other run of the op (applied before, or by another run).
   */
  async decide(inflight: InflightOp): Promise<boolean> {
    try {
      await this.LedgerEntry.collection.insertOne(toLedgerDoc(inflight) as never);
      return true;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const entry = await this.LedgerEntry.collection.findOne({ _id: inflight.id } as object, { projection: { token: 1 } });
      return entry?.token === inflight.token;
    }
  }

  /**
   * Finishes an op in flight on a wallet: decided → committed, else rolled back (its token's
   * write, once). Safe at any time and any number of times, beside any other run.
   */
  async finish(walletId: string, inflight: InflightOp): Promise<boolean> {
    const decided = await this.decide(inflight);
    if (decided) await this.wallets.commit(walletId, inflight);
    else await this.wallets.rollback(walletId, inflight);
    return decided;
  }

  /** Is this op's entry in the ledger (the op applied, or deciding its commit)? */
  async has(opId: string): Promise<boolean> {
    return (await this.LedgerEntry.collection.findOne({ _id: opId } as object, { projection: { _id: 1 } })) !== null;
  }

  /** Has this op been applied to the wallet? An op of it in flight is finished first. */
  async hasApplied(walletId: string, opId: string): Promise<boolean> {
    await this.flush(walletId, opId);
    return this.has(opId);
  }

  /** Finishes the ops in flight on a wallet (all, or the one op given). */
  async flush(walletId: string, opId?: string): Promise<void> {
    const state = await this.wallets.guardState(walletId);
    for (const inflight of state?.inflight ?? []) if (!opId || inflight.id === opId) await this.finish(walletId, inflight);
  }

  /** The sweep: ops left in flight since before `cutoff` (their run died) are finished. */
  async sweep(cutoff: Date): Promise<void> {
    for (const wallet of await this.wallets.inflightSince(cutoff))
      for (const inflight of wallet.inflight)
        await this.finish(wallet._id, inflight).catch((err: unknown) =>
          this.log.warn({ err, walletId: wallet._id, opId: inflight.id }, 'finishing an op in flight failed; the sweep will retry'),
        );
  }

  /**
   * Moves a wallet of the previous release to this protocol: fenced (no op applies meanwhile),
   * its pending entries into the ledger (an entry there already is kept once), then its old
   * arrays dropped. Idempotent: a crash anywhere is finished by running it again.
   */
  async migrate(walletId: string): Promise<void> {
    await this.wallets.fenceLegacy(walletId);
    const entries = await this.wallets.legacyEntries(walletId);
    if (entries.length > 0) await this.appendEntries(entries);
    await this.wallets.dropLegacy(walletId);
  }

  /** The sweep's migration pass: every wallet still in the previous form, a batch at a time. */
  async migrateLegacy(): Promise<number> {
    const ids = await this.wallets.legacyIds();
    for (const walletId of ids) await this.migrate(walletId);
    return ids.length;
  }

  /** A wallet's entries in the ledger (tests and audits sum them against its balances). */
  async entriesOf(walletId: string): Promise<LedgerEntry[]> {
    const docs = await this.LedgerEntry.find({ walletId }).lean();
    return docs.map(({ _id, createdAt, ...entry }) => ({ ...entry, id: _id, createdAt: createdAt.toISOString() }));
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
