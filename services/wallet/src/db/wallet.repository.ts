import { DEFAULT_CURRENCY, newReference, newUuid } from '@mkt/contracts/wallet';
import { isDuplicateKey } from '@mkt/kit/domain';
import type { Collection, mongo } from 'mongoose';
import type { BoundedOp, InflightOp, LedgerEntry, WalletDoc, WalletSummary } from '../domain/records';
import { escrowOf, type WalletGuardState } from '../domain/wallet-ops';
import { recordsOf } from './collections';
import type { WalletModels } from './models';

/** What readers of balances never need: the protocol's fields, and those of wallets not migrated yet. */
const SUMMARY = { appliedOps: 0, inflight: 0, inflightInMinor: 0, inflightOutMinor: 0, doneOps: 0, pendingEntries: 0 };

/** The fields a wallet of this protocol starts with (see `WalletDoc`). */
const protocolFields = (): Pick<WalletDoc, 'appliedOps' | 'inflight' | 'inflightInMinor' | 'inflightOutMinor'> => ({
  appliedOps: false,
  inflight: [],
  inflightInMinor: 0,
  inflightOutMinor: 0,
});

/** What never changes on a wallet once opened: its id and currency. */
export type WalletIdentity = Pick<WalletSummary, '_id' | 'currency'>;

/** How many users' wallet identities a process keeps (`identityOf`; about a hundred bytes each). */
const KNOWN_WALLETS = 10_000;

/** A wallet as a refused write reads it: its guards, its ops in flight, and whether it still needs migrating. */
export type WalletGuardRead = WalletGuardState & { inflight: InflightOp[]; legacy: boolean };

/**
 * Every query of `wallets`: opening, reading, and the three guarded single-document writes of
 * an op (taken into flight, committed, rolled back). Each write has its rule in its filter.
 */
export class WalletRepository {
  private readonly Wallet: WalletModels['Wallet'];
  /** The same collection for the driver's commands. */
  private readonly wallets: Collection<WalletDoc>;
  /** Users' wallets' ids and currencies this process has read (`identityOf`). */
  private readonly identities = new Map<string, WalletIdentity>();

  constructor(models: Pick<WalletModels, 'Wallet'>) {
    this.Wallet = models.Wallet;
    this.wallets = recordsOf(models.Wallet);
  }

  /**
   * The wallet of a user, opened on first use (or by the registration event). An existing
   * wallet — nearly every call: the registration event opens it — is one indexed read, not a
   * write (an upsert costs the database server 3–4 times a read); a missing one is created by
   * one upsert, so two first uses at once still create one wallet.
   */
  async open(userId: string, userRef: string, referencePrefix: string, now = new Date()): Promise<WalletSummary> {
    const existing = await this.find({ userId });
    if (existing) {
      this.know(userId, existing);
      return existing;
    }
    const fresh = {
      _id: newUuid(),
      referenceId: newReference('USR-WAL', referencePrefix),
      userRef,
      currency: DEFAULT_CURRENCY,
      availableMinor: 0,
      heldMinor: 0,
      ...protocolFields(),
      createdAt: now,
      updatedAt: now,
    };
    try {
      const wallet = await this.wallets.findOneAndUpdate(
        { userId },
        { $setOnInsert: fresh },
        { upsert: true, returnDocument: 'after', projection: SUMMARY },
      );
      // An upsert answering the document after it always has one.
      this.know(userId, wallet!);
      return wallet!;
    } catch (err) {
      // Two first uses at once: the unique userId lets one create it; the other reads it.
      if (!isDuplicateKey(err)) throw err;
      const raced = await this.Wallet.findOne({ userId }, SUMMARY).lean<WalletSummary>();
      if (!raced) throw err;
      return raced;
    }
  }

  /**
   * A user's wallet's id and currency, opened on first use: neither ever changes and a wallet
   * is never removed, so once this process has read them they are answered without a read (a
   * bounded map of `KNOWN_WALLETS` users, the first one read going first).
   */
  async identityOf(userId: string, userRef: string, referencePrefix: string): Promise<WalletIdentity> {
    const known = this.identities.get(userId);
    if (known) return known;
    return this.know(userId, await this.open(userId, userRef, referencePrefix));
  }

  private know(userId: string, wallet: WalletIdentity): WalletIdentity {
    const identity = { _id: wallet._id, currency: wallet.currency };
    this.identities.set(userId, identity);
    if (this.identities.size > KNOWN_WALLETS) this.identities.delete(this.identities.keys().next().value!);
    return identity;
  }

  /** A user's wallet when it exists (never opens one). */
  async find(filter: { userId: string } | { userRef: string }): Promise<WalletSummary | null> {
    return this.wallets.findOne(filter, { projection: SUMMARY });
  }

  /** The wallets of some users that have one, in one read (a transfer's two parties). */
  async ofUsers(userIds: string[]): Promise<WalletSummary[]> {
    return this.wallets.find({ userId: { $in: userIds } }, { projection: SUMMARY }).toArray();
  }

  async findById(walletId: string): Promise<WalletSummary | null> {
    return this.Wallet.findById(walletId, SUMMARY).lean<WalletSummary>();
  }

  /**
   * Takes an op into flight, in one single-document write whose filter holds every guard: the
   * wallet is of this protocol (migrated), the same op is not in flight already, enough
   * available and held for what it takes, and the balance stays under its ceiling counting every
   * op in flight. What the op takes leaves the balances now; what it adds waits for the commit.
   * The write does not know whether the op was applied before: the ledger decides that next.
   * False when the filter matched nothing (`guardState` says why).
   */
  async escrow(walletId: string, op: BoundedOp, inflight: InflightOp, now = new Date()): Promise<boolean> {
    const moves = escrowOf(op);
    const growth = op.availableDeltaMinor + op.heldDeltaMinor;
    const filter: mongo.Filter<WalletDoc> = {
      _id: walletId,
      appliedOps: false,
      pendingEntries: { $exists: false },
      'inflight.id': { $ne: op.opId },
    };
    if (moves.takeAvailableMinor > 0) filter.availableMinor = { $gte: moves.takeAvailableMinor };
    if (moves.takeHeldMinor > 0) filter.heldMinor = { $gte: moves.takeHeldMinor };
    // The ceiling is a guard of the same write: two racing credits cannot both fit under it.
    // Balances and the ceiling stay below 2^50, so the sum is exact.
    if (growth > 0)
      filter.$expr = {
        $lte: [{ $add: ['$availableMinor', '$heldMinor', '$inflightInMinor', '$inflightOutMinor'] }, op.ceilingMinor - growth],
      };
    const taken = await this.wallets.updateOne(filter, {
      $inc: {
        availableMinor: -moves.takeAvailableMinor,
        heldMinor: -moves.takeHeldMinor,
        inflightInMinor: moves.inMinor,
        inflightOutMinor: moves.outMinor,
      },
      $push: { inflight: inflight },
      $set: { updatedAt: now },
    });
    return taken.matchedCount === 1;
  }

  /**
   * The op its ledger entry decided (the entry carries this run's token): what it adds reaches
   * the balances and it leaves flight, in one write matched on the token — done once, whoever
   * finishes it.
   */
  async commit(walletId: string, inflight: InflightOp, now = new Date()): Promise<boolean> {
    const moves = escrowOf(inflight);
    return this.settle(walletId, inflight.token, moves.addAvailableMinor, moves.addHeldMinor, moves, now);
  }

  /** The op was applied before by another run (the ledger says so): what this run took goes back, once. */
  async rollback(walletId: string, inflight: InflightOp, now = new Date()): Promise<boolean> {
    const moves = escrowOf(inflight);
    return this.settle(walletId, inflight.token, moves.takeAvailableMinor, moves.takeHeldMinor, moves, now);
  }

  /** A wallet's guards, its ops in flight and whether it still needs migrating (after a refused `escrow`). */
  async guardState(walletId: string): Promise<WalletGuardRead | null> {
    const wallet = await this.wallets.findOne(
      { _id: walletId },
      {
        projection: {
          availableMinor: 1,
          heldMinor: 1,
          inflightInMinor: 1,
          inflightOutMinor: 1,
          inflight: 1,
          appliedOps: 1,
          pendingEntries: 1,
        },
      },
    );
    if (!wallet) return null;
    return {
      availableMinor: wallet.availableMinor,
      heldMinor: wallet.heldMinor,
      // A wallet of the previous release lacks the protocol's fields.
      inflightInMinor: wallet.inflightInMinor ?? 0,
      inflightOutMinor: wallet.inflightOutMinor ?? 0,
      inflight: wallet.inflight ?? [],
      legacy: wallet.appliedOps !== false || wallet.pendingEntries !== undefined,
    };
  }

  /**
   * Wallets with an op in flight since before `cutoff` (a run died mid-op), with those ops. Its
   * bound is a range of the sparse `inflight.createdAt` index: only such wallets are read, not
   * every wallet on each sweep (not hinted: no other index has the field).
   */
  async inflightSince(cutoff: Date, limit = 200): Promise<Array<{ _id: string; inflight: InflightOp[] }>> {
    const wallets = await this.wallets
      .find({ 'inflight.createdAt': { $lt: cutoff.toISOString() } }, { projection: { inflight: 1 } })
      .limit(limit)
      .toArray();
    return wallets.map((wallet) => ({
      _id: wallet._id,
      inflight: (wallet.inflight ?? []).filter((op) => op.createdAt < cutoff.toISOString()),
    }));
  }

  /**
   * Wallets still in the previous release's form (op ids in `appliedOps`, entries in
   * `pendingEntries`, `doneOps`), in `_id` order, after `after` when given.
   */
  async legacyIds(limit = 200, after?: string): Promise<string[]> {
    const legacy: mongo.Filter<WalletDoc> = {
      $or: [{ appliedOps: { $ne: false as const } }, { pendingEntries: { $exists: true } }, { doneOps: { $exists: true } }],
    };
    const wallets = await this.wallets
      .find(after === undefined ? legacy : { _id: { $gt: after }, ...legacy }, { projection: { _id: 1 } })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return wallets.map((wallet) => wallet._id);
  }

  /**
   * Migration, first write: `appliedOps` becomes `false` — from then on no process (this
   * release's or the previous one's) can apply an op here until the entries below are in the
   * ledger. Dropping the op ids loses nothing: each was pushed with its entry, which is either
   * in the ledger already or still in `pendingEntries`. Only the first run of it changes anything.
   */
  async fenceLegacy(walletId: string): Promise<void> {
    await this.wallets.updateOne({ _id: walletId, appliedOps: { $ne: false } }, { $set: protocolFields() });
  }

  /** A fenced legacy wallet's entries not moved yet (nothing can add to them any more). */
  async legacyEntries(walletId: string): Promise<LedgerEntry[]> {
    const wallet = await this.wallets.findOne({ _id: walletId }, { projection: { pendingEntries: 1 } });
    return wallet?.pendingEntries ?? [];
  }

  /** Migration, last write: the old arrays go, once every entry read by `legacyEntries` is in the ledger. */
  async dropLegacy(walletId: string): Promise<void> {
    await this.wallets.updateOne({ _id: walletId, appliedOps: false }, { $unset: { pendingEntries: '', doneOps: '' } });
  }

  private async settle(
    walletId: string,
    token: string,
    availableMinor: number,
    heldMinor: number,
    moves: { inMinor: number; outMinor: number },
    now: Date,
  ): Promise<boolean> {
    const settled = await this.wallets.updateOne(
      { _id: walletId, 'inflight.token': token },
      {
        $inc: { availableMinor, heldMinor, inflightInMinor: -moves.inMinor, inflightOutMinor: -moves.outMinor },
        $pull: { inflight: { token } },
        $set: { updatedAt: now },
      },
    );
    return settled.matchedCount === 1;
  }
}
