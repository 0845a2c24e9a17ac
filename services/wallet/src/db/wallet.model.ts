import mongoose, { Schema } from 'mongoose';
import { DEFAULT_CURRENCY, newReference, newUuid } from '@mkt/contracts';
import { freeFormArrayField, isDuplicateKey } from '@mkt/kit';
import { BalanceCeilingExceeded, InsufficientFunds } from '../domain/wallet.errors';

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
  /** Operations applied whose owning record has not yet recorded it: the idempotency guard. */
  appliedOps: string[];
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
    pendingEntries: freeFormArrayField,
  },
  { timestamps: true, versionKey: false },
);

export const Wallet = mongoose.model<WalletDoc>('Wallet', walletSchema, 'wallets');

/** The wallet of a user, opened on first use (or by the registration event). */
export async function openWallet(userId: string, userRef: string, referencePrefix: string): Promise<WalletDoc> {
  const existing = await Wallet.findOne({ userId }).lean<WalletDoc>();
  if (existing) return existing;
  try {
    return (await Wallet.create({ userId, userRef, referenceId: newReference('USR-WAL', referencePrefix) })).toObject();
  } catch (err) {
    // Two first uses at once: the unique userId lets one create it; the other reads it.
    if (!isDuplicateKey(err)) throw err;
    const raced = await Wallet.findOne({ userId }).lean<WalletDoc>();
    if (!raced) throw err;
    return raced;
  }
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
 * Applies a balance change exactly once, in one single-document write: the guards (not applied
 * before, enough available and held, the balance stays under its ceiling) are in the filter, the
 * ledger entry rides along. A repeat of an applied op is a no-op; a change that would go
 * negative is InsufficientFunds, one that would pass the ceiling BalanceCeilingExceeded.
 */
export async function applyWalletOp(walletId: string, op: WalletOp): Promise<void> {
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
  const { modifiedCount } = await Wallet.updateOne(filter, {
    $inc: { availableMinor: op.availableDeltaMinor, heldMinor: op.heldDeltaMinor },
    $push: { appliedOps: op.opId, pendingEntries: entry },
  });
  if (modifiedCount === 1) return;
  const wallet = await Wallet.findById(walletId, { appliedOps: 1, availableMinor: 1, heldMinor: 1 }).lean<WalletDoc>();
  if (wallet?.appliedOps.includes(op.opId)) return;
  const short = wallet !== null && (wallet.availableMinor < -op.availableDeltaMinor || wallet.heldMinor < -op.heldDeltaMinor);
  if (wallet && growth > 0 && !short) throw new BalanceCeilingExceeded();
  throw new InsufficientFunds();
}

/**
 * Forgets an applied op once its owning record says the step is done (so it is never replayed).
 * Keeps `appliedOps` small without FerretDB-unsupported `$slice`.
 */
export async function forgetWalletOp(walletId: string, opId: string): Promise<void> {
  await Wallet.updateOne({ _id: walletId }, { $pull: { appliedOps: opId } });
}
