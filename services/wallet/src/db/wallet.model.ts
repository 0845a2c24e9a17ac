import mongoose, { Schema } from 'mongoose';
import { DEFAULT_CURRENCY, newReference, newUuid } from '@mkt/contracts';
import { freeFormArrayField, isDuplicateKey } from '@mkt/kit';

/**
 * The largest balance any wallet may reach whatever the configuration (10 trillion ETB): sums
 * of balances and a credit stay far below 2^53, so no arithmetic on money is ever inexact.
 */
export const HARD_CEILING_MINOR = 1_000_000_000_000_000;

export type LedgerEntryType =
  | 'topup_credit'
  | 'payout_hold'
  | 'payout_release'
  | 'payout_settle'
  | 'transfer_debit'
  | 'transfer_credit'
  | 'booking_hold'
  | 'booking_settle'
  | 'booking_capture'
  | 'booking_fee';

/** One balance change. Its deltas, summed over a wallet's entries, are its balances. */
export interface LedgerEntry {
  id: string;
  walletId: string;
  type: LedgerEntryType;
  availableDeltaMinor: number;
  heldDeltaMinor: number;
  reference: string;
  createdAt: string;
}

export interface WalletDoc {
  _id: string;
  referenceId: string;
  userId: string;
  userRef: string;
  currency: string;
  availableMinor: number;
  heldMinor: number;
  /**
   * Operations applied: the idempotency guard. An op id stays here until an hour after its
   * owning record recorded the step (`doneOps`), so a repeat read from a stale record is a no-op.
   */
  appliedOps: string[];
  /** Op ids whose step its record has recorded, with when: dropped from `appliedOps` an hour later. */
  doneOps: Array<{ id: string; at: Date }>;
  /** Entries written with the balance change, moved to the ledger collection by the relay. */
  pendingEntries: LedgerEntry[];
  createdAt: Date;
  updatedAt: Date;
}

const walletSchema = new Schema<WalletDoc>(
  {
    _id: { type: String, default: newUuid },
    referenceId: { type: String, required: true, unique: true },
    userId: { type: String, required: true, unique: true },
    userRef: { type: String, required: true, unique: true },
    currency: { type: String, required: true, default: DEFAULT_CURRENCY },
    availableMinor: { type: Number, required: true, default: 0, min: 0 },
    heldMinor: { type: Number, required: true, default: 0, min: 0 },
    appliedOps: { type: [String], default: [] },
    doneOps: freeFormArrayField,
    pendingEntries: freeFormArrayField,
  },
  { timestamps: true, versionKey: false },
);

export const Wallet = mongoose.model<WalletDoc>('Wallet', walletSchema, 'wallets');

/** A wallet without its bookkeeping arrays (what readers of balances need). */
export type WalletSummary = Omit<WalletDoc, 'appliedOps' | 'doneOps' | 'pendingEntries'>;

const SUMMARY = { appliedOps: 0, doneOps: 0, pendingEntries: 0 };

/**
 * The wallet of a user, opened on first use (or by the registration event): one upsert that
 * finds it or creates it, so a use of an existing wallet is a single round trip.
 */
export async function openWallet(userId: string, userRef: string, referencePrefix: string): Promise<WalletSummary> {
  const now = new Date();
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
    const wallet = await Wallet.collection.findOneAndUpdate(
      { userId },
      { $setOnInsert: fresh },
      { upsert: true, returnDocument: 'after', projection: SUMMARY },
    );
    return wallet as unknown as WalletSummary;
  } catch (err) {
    // Two first uses at once: the unique userId lets one create it; the other reads it.
    if (!isDuplicateKey(err)) throw err;
    const raced = await Wallet.findOne({ userId }, SUMMARY).lean<WalletSummary>();
    if (!raced) throw err;
    return raced;
  }
}

/** A user's wallet when it exists (never opens one). */
export async function findWallet(filter: { userId: string } | { userRef: string }): Promise<WalletSummary | null> {
  return Wallet.findOne(filter, SUMMARY).lean<WalletSummary>();
}

export interface WalletOp {
  /** Unique per step of a business operation, e.g. `payout:<id>:hold`. */
  opId: string;
  type: LedgerEntryType;
  availableDeltaMinor: number;
  heldDeltaMinor: number;
  reference: string;
  /** The balance (available + held) this op may not take the wallet past; at most the hard ceiling. */
  ceilingMinor?: number;
}

function assertAmount(minor: number): void {
  if (!Number.isSafeInteger(minor) || Math.abs(minor) > HARD_CEILING_MINOR) throw new RangeError(`Amount out of range: ${minor}`);
}

/**
 * What applying an op did: `applied` answers the wallet's pending ledger entries as the write
 * left them (this op's among them), so moving them to the ledger needs no read.
 */
export type ApplyOutcome =
  { kind: 'applied'; pendingEntries: LedgerEntry[] } | { kind: 'repeat' } | { kind: 'insufficient_funds' } | { kind: 'ceiling_exceeded' };

/**
 * Applies a balance change exactly once, in one single-document write: the guards (not applied
 * before, enough available and held, the balance stays under its ceiling) are in the filter, the
 * ledger entry rides along. A repeat of an applied op changes nothing; a change that would go
 * negative or pass the ceiling changes nothing either and says which (one more read, only then).
 */
export async function applyWalletOp(walletId: string, op: WalletOp): Promise<ApplyOutcome> {
  assertAmount(op.availableDeltaMinor);
  assertAmount(op.heldDeltaMinor);
  const ceiling = Math.min(op.ceilingMinor ?? HARD_CEILING_MINOR, HARD_CEILING_MINOR);
  const growth = op.availableDeltaMinor + op.heldDeltaMinor;
  const filter: Record<string, unknown> = { _id: walletId, appliedOps: { $ne: op.opId } };
  if (op.availableDeltaMinor < 0) filter.availableMinor = { $gte: -op.availableDeltaMinor };
  if (op.heldDeltaMinor < 0) filter.heldMinor = { $gte: -op.heldDeltaMinor };
  // The ceiling is a guard of the same write (no read-then-write): two racing credits cannot
  // both fit under it. Balances and the ceiling stay below 2^50, so the sum is exact.
  if (growth > 0) filter.$expr = { $lte: [{ $add: ['$availableMinor', '$heldMinor'] }, ceiling - growth] };
  const entry: LedgerEntry = {
    id: op.opId,
    walletId,
    type: op.type,
    availableDeltaMinor: op.availableDeltaMinor,
    heldDeltaMinor: op.heldDeltaMinor,
    reference: op.reference,
    createdAt: new Date().toISOString(),
  };
  const updated = await Wallet.collection.findOneAndUpdate(
    filter as object,
    {
      $inc: { availableMinor: op.availableDeltaMinor, heldMinor: op.heldDeltaMinor },
      $push: { appliedOps: op.opId, pendingEntries: entry },
      $set: { updatedAt: new Date() },
    } as object,
    { returnDocument: 'after', projection: { pendingEntries: 1 } },
  );
  if (updated) return { kind: 'applied', pendingEntries: (updated.pendingEntries as LedgerEntry[] | undefined) ?? [entry] };
  const wallet = await Wallet.findById(walletId, { appliedOps: 1, availableMinor: 1, heldMinor: 1 }).lean<WalletDoc>();
  if (wallet?.appliedOps.includes(op.opId)) return { kind: 'repeat' };
  const short = wallet !== null && (wallet.availableMinor < -op.availableDeltaMinor || wallet.heldMinor < -op.heldDeltaMinor);
  if (wallet && growth > 0 && !short) return { kind: 'ceiling_exceeded' };
  return { kind: 'insufficient_funds' };
}

/** How long a wallet remembers an op id after its record recorded the step. */
export const FORGET_OPS_AFTER_MS = 60 * 60_000;

/**
 * The owning record says the step is done: the op id is forgotten, but only an hour later
 * (`dropForgottenOps`). A step run twice at once (a request and the sweep, a redelivered
 * event) can then never apply again after the first run forgot it, whatever its stale read.
 */
export async function forgetWalletOp(walletId: string, opId: string): Promise<void> {
  await Wallet.updateOne({ _id: walletId, 'doneOps.id': { $ne: opId } }, { $push: { doneOps: { id: opId, at: new Date() } } });
}

/** Drops op ids from a wallet now (their steps ended long ago). */
export async function dropWalletOps(walletId: string, opIds: string[]): Promise<void> {
  await Wallet.updateOne({ _id: walletId }, { $pullAll: { appliedOps: opIds } });
}

/** The sweep: op ids forgotten over an hour ago leave `appliedOps` (keeps it small). */
export async function dropForgottenOps(now = new Date()): Promise<void> {
  const cutoff = now.getTime() - FORGET_OPS_AFTER_MS;
  const wallets = await Wallet.find({ 'doneOps.at': { $lt: new Date(cutoff) } }, { doneOps: 1 })
    .limit(200)
    .lean<WalletDoc[]>();
  for (const wallet of wallets) {
    const old = wallet.doneOps.filter((entry) => new Date(entry.at).getTime() < cutoff);
    // Pulled as the exact stored values (works on every MongoDB-compatible server).
    await Wallet.collection.updateOne(
      { _id: wallet._id } as object,
      {
        $pullAll: { appliedOps: old.map((entry) => entry.id), doneOps: old },
      } as object,
    );
  }
}
