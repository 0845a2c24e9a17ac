import { DEFAULT_CURRENCY, newReference, newUuid } from '@mkt/contracts';
import { isDuplicateKey } from '@mkt/kit';
import type { ApplyOutcome, BoundedOp, LedgerEntry, WalletDoc, WalletSummary } from '../domain/records';
import type { WalletModels } from './models';

const SUMMARY = { appliedOps: 0, doneOps: 0, pendingEntries: 0 };

/** Every query of `wallets`: opening, reading, the guarded balance write and the op-id bookkeeping. */
export class WalletRepository {
  private readonly Wallet: WalletModels['Wallet'];

  constructor(models: Pick<WalletModels, 'Wallet'>) {
    this.Wallet = models.Wallet;
  }

  /**
   * The wallet of a user, opened on first use (or by the registration event). An existing
   * wallet — nearly every call: the registration event opens it — is one indexed read, not a
   * write (issue 25: an upsert costs the database server 3–4 times a read); a missing one is
   * created by one upsert, so two first uses at once still create one wallet.
   */
  async open(userId: string, userRef: string, referencePrefix: string, now = new Date()): Promise<WalletSummary> {
    const existing = await this.find({ userId });
    if (existing) return existing;
    const fresh = {
      _id: newUuid(),
      referenceId: newReference('USR-WAL', referencePrefix),
      userRef,
      currency: DEFAULT_CURRENCY,
      availableMinor: 0,
      heldMinor: 0,
      appliedOps: [],
      doneOps: [],
      pendingEntries: [],
      createdAt: now,
      updatedAt: now,
    };
    try {
      const wallet = await this.Wallet.collection.findOneAndUpdate(
        { userId },
        { $setOnInsert: fresh },
        { upsert: true, returnDocument: 'after', projection: SUMMARY },
      );
      return wallet as unknown as WalletSummary;
    } catch (err) {
      // Two first uses at once: the unique userId lets one create it; the other reads it.
      if (!isDuplicateKey(err)) throw err;
      const raced = await this.Wallet.findOne({ userId }, SUMMARY).lean<WalletSummary>();
      if (!raced) throw err;
      return raced;
    }
  }

  /** A user's wallet when it exists (never opens one). */
  async find(filter: { userId: string } | { userRef: string }): Promise<WalletSummary | null> {
    return this.Wallet.collection.findOne(filter, { projection: SUMMARY }) as Promise<WalletSummary | null>;
  }

  /** The wallets of some users that have one, in one read (a transfer's two parties). */
  async ofUsers(userIds: string[]): Promise<WalletSummary[]> {
    return (await this.Wallet.collection
      .find({ userId: { $in: userIds } }, { projection: SUMMARY })
      .toArray()) as unknown as WalletSummary[];
  }

  async findById(walletId: string): Promise<WalletSummary | null> {
    return this.Wallet.findById(walletId, SUMMARY).lean<WalletSummary>();
  }

  /** Has this op been applied to the wallet (and not forgotten yet)? */
  async hasApplied(walletId: string, opId: string): Promise<boolean> {
    const wallet = await this.Wallet.findById(walletId, { appliedOps: 1 }).lean<WalletDoc>();
    return wallet?.appliedOps.includes(opId) ?? false;
  }

  /**
   * Applies a balance change exactly once, in one single-document write: the guards (not applied
   * before, enough available and held, the balance stays under its ceiling) are in the filter, the
   * ledger entry rides along. A repeat of an applied op changes nothing; a change that would go
   * negative or pass the ceiling changes nothing either, and the wallet is read (only then) so
   * `refusal` can say which.
   */
  async apply(
    walletId: string,
    op: BoundedOp,
    entry: LedgerEntry,
    refusal: (wallet: WalletDoc | null) => Exclude<ApplyOutcome['kind'], 'applied'>,
    now = new Date(),
  ): Promise<ApplyOutcome> {
    const growth = op.availableDeltaMinor + op.heldDeltaMinor;
    const filter: Record<string, unknown> = { _id: walletId, appliedOps: { $ne: op.opId } };
    if (op.availableDeltaMinor < 0) filter.availableMinor = { $gte: -op.availableDeltaMinor };
    if (op.heldDeltaMinor < 0) filter.heldMinor = { $gte: -op.heldDeltaMinor };
    // The ceiling is a guard of the same write (no read-then-write): two racing credits cannot
    // both fit under it. Balances and the ceiling stay below 2^50, so the sum is exact.
    if (growth > 0) filter.$expr = { $lte: [{ $add: ['$availableMinor', '$heldMinor'] }, op.ceilingMinor - growth] };
    const updated = await this.Wallet.collection.findOneAndUpdate(
      filter as object,
      {
        $inc: { availableMinor: op.availableDeltaMinor, heldMinor: op.heldDeltaMinor },
        $push: { appliedOps: op.opId, pendingEntries: entry },
        $set: { updatedAt: now },
      } as object,
      { returnDocument: 'after', projection: { pendingEntries: 1 } },
    );
    if (updated) return { kind: 'applied', pendingEntries: (updated.pendingEntries as LedgerEntry[] | undefined) ?? [entry] };
    const wallet = await this.Wallet.findById(walletId, { appliedOps: 1, availableMinor: 1, heldMinor: 1 }).lean<WalletDoc>();
    return { kind: refusal(wallet) };
  }

  /**
   * The owning record says the step is done: the op id is forgotten, but only an hour later
   * (`dropForgottenOps`). A step run twice at once (a request and the sweep, a redelivered
   * event) can then never apply again after the first run forgot it, whatever its stale read.
   */
  async forgetOp(walletId: string, opId: string, now = new Date()): Promise<void> {
    await this.Wallet.updateOne({ _id: walletId, 'doneOps.id': { $ne: opId } }, { $push: { doneOps: { id: opId, at: now } } });
  }

  /** Drops op ids from a wallet now (their steps ended long ago). */
  async dropOps(walletId: string, opIds: string[]): Promise<void> {
    await this.Wallet.updateOne({ _id: walletId }, { $pullAll: { appliedOps: opIds } });
  }

  /** The sweep: op ids forgotten before `cutoff` leave `appliedOps` (keeps it small). */
  async dropForgottenOps(cutoff: Date): Promise<void> {
    const wallets = await this.Wallet.find({ 'doneOps.at': { $lt: cutoff } }, { doneOps: 1 })
      .limit(200)
      .lean<WalletDoc[]>();
    for (const wallet of wallets) {
      const old = wallet.doneOps.filter((entry) => new Date(entry.at).getTime() < cutoff.getTime());
      // Pulled as the exact stored values (works on every MongoDB-compatible server).
      await this.Wallet.collection.updateOne(
        { _id: wallet._id } as object,
        {
          $pullAll: { appliedOps: old.map((entry) => entry.id), doneOps: old },
        } as object,
      );
    }
  }
}
