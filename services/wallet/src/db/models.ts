import { Schema, type Connection } from 'mongoose';
import { DEFAULT_CURRENCY, newUuid } from '@mkt/contracts/wallet';
import { freeFormArrayField, pendingEventsField } from '@mkt/kit/bus';
import { idempotencyRecordSchema, windowedCounterSchema, type IdempotencyRecordDoc, type WindowedCounterDoc } from '@mkt/kit/db';
import type { BookingHoldDoc, LedgerEntryDoc, PayoutDoc, TopUpDoc, TransferDoc, WalletDoc } from '../domain/records';

/**
 * The wallet's schemas, and `walletModels(db)` binding them to a connection (no
 * process-global models: two services in one test process use two databases).
 */

/** The name of the wallets' sparse index of their ops in flight by age (0005-read-indexes builds it). */
export const INFLIGHT_INDEX = 'inflight.createdAt_1';
/** The name of the holds' index by status and last move (the resume sweep's Settling read hints it; 0005-read-indexes builds it). */
export const HOLD_MOVED_INDEX = 'status_1_updatedAt_1';

const walletSchema = new Schema<WalletDoc>(
  {
    _id: { type: String, default: newUuid },
    referenceId: { type: String, required: true, unique: true },
    userId: { type: String, required: true, unique: true },
    userRef: { type: String, required: true, unique: true },
    currency: { type: String, required: true, default: DEFAULT_CURRENCY },
    availableMinor: { type: Number, required: true, default: 0, min: 0 },
    heldMinor: { type: Number, required: true, default: 0, min: 0 },
    inflight: freeFormArrayField,
    inflightInMinor: { type: Number, required: true, default: 0 },
    inflightOutMinor: { type: Number, required: true, default: 0 },
    appliedOps: { type: Schema.Types.Mixed, default: false },
  },
  { timestamps: true, versionKey: false },
);
/**
 * The ledger sweep's read of ops left in flight (every `SWEEP_INTERVAL_MS`, on every replica):
 * its bound on the ops' `createdAt` (ISO strings) is a range of these keys, so it reads only the
 * wallets with an op in flight since before it, not every wallet. Sparse: a wallet without
 * `inflight` (of the previous protocol) has no key; the read's `$lt` never matches one anyway.
 */
walletSchema.index({ 'inflight.createdAt': 1 }, { sparse: true, name: INFLIGHT_INDEX });

/** Append-only; an entry's id is its op id: inserted once, ever (what decides the op applied). */
const ledgerSchema = new Schema<LedgerEntryDoc>(
  {
    _id: { type: String, required: true },
    walletId: { type: String, required: true, index: true },
    type: { type: String, required: true },
    availableDeltaMinor: { type: Number, required: true },
    heldDeltaMinor: { type: Number, required: true },
    reference: { type: String, required: true },
    createdAt: { type: Date, required: true },
    token: { type: String },
    seq: { type: Number },
    chainKey: { type: String, unique: true, sparse: true },
    availableAfterMinor: { type: Number },
    heldAfterMinor: { type: Number },
    postedAt: { type: Date },
  },
  { versionKey: false },
);
// The statement: a wallet's entries newest first by `seq`, all or of some types, and the date
// bounds turned into `seq` bounds (postedAt never goes back along the chain).
ledgerSchema.index({ walletId: 1, seq: -1 });
ledgerSchema.index({ walletId: 1, type: 1, seq: -1 });
ledgerSchema.index({ walletId: 1, postedAt: -1, seq: -1 });

const topUpSchema = new Schema<TopUpDoc>(
  {
    _id: { type: String, required: true },
    referenceId: { type: String, required: true, unique: true },
    walletId: { type: String, required: true },
    userId: { type: String, required: true, index: true },
    amountMinor: { type: Number, required: true },
    currency: { type: String, required: true },
    paymentMethod: { type: String, required: true },
    provider: { type: String, required: true },
    status: { type: String, required: true, index: true },
    paymentUrl: { type: String, default: '' },
    redirectUrl: { type: String, required: true },
    notes: { type: String, default: null },
    checkoutTokenHash: { type: String, default: null },
    returnTokenHash: { type: String, default: null },
    expiresAt: { type: Date, required: true },
    completedAt: { type: Date, default: null },
    credit: { type: String, default: 'none', index: true },
    pendingEvents: pendingEventsField,
  },
  { timestamps: true, versionKey: false },
);

// The owner's history, newest first.
topUpSchema.index({ userId: 1, createdAt: -1 });
// The same in the page's full order (`_id` breaks ties): a page is read in order and stops at its
// end, instead of the owner's whole history fetched and sorted. The one above is then redundant
// (kept while a process of the previous release may run beside this one: README "Indexes").
topUpSchema.index({ userId: 1, createdAt: -1, _id: -1 });

const payoutSchema = new Schema<PayoutDoc>(
  {
    _id: { type: String, required: true },
    referenceId: { type: String, required: true, unique: true },
    walletId: { type: String, required: true },
    userId: { type: String, required: true, index: true },
    amountMinor: { type: Number, required: true },
    currency: { type: String, required: true },
    bankCode: { type: String, required: true },
    accountNumber: { type: String, required: true },
    accountName: { type: String, required: true },
    reason: { type: String, required: true },
    status: { type: String, required: true, index: true },
    adminNotes: { type: String, default: null },
    processedAt: { type: Date, default: null },
    hold: { type: String, default: 'pending', index: true },
    finish: { type: String, default: 'none', index: true },
    requestedBy: { type: String, default: null },
    history: freeFormArrayField,
    pendingEvents: pendingEventsField,
  },
  { timestamps: true, versionKey: false },
);

// The admins' payout queue: by state, oldest first, without a scan.
payoutSchema.index({ status: 1, hold: 1, createdAt: 1 });
// The owner's history, newest first.
payoutSchema.index({ userId: 1, createdAt: -1 });
// Both in their page's full order (`_id` breaks ties): a page is read in order, not sorted in
// memory. The two above are then redundant (kept while a previous release may run: README "Indexes").
payoutSchema.index({ status: 1, hold: 1, createdAt: 1, _id: 1 });
payoutSchema.index({ userId: 1, createdAt: -1, _id: -1 });

const transferSchema = new Schema<TransferDoc>(
  {
    _id: { type: String, required: true },
    fromWalletId: { type: String, required: true, index: true },
    toWalletId: { type: String, required: true },
    fromUserId: { type: String, required: true },
    toUserId: { type: String, required: true },
    amountMinor: { type: Number, required: true },
    currency: { type: String, required: true },
    status: { type: String, required: true, index: true },
    completedAt: { type: Date, default: null },
  },
  { timestamps: true, versionKey: false },
);
// What a seller sent a buyer (the capture event's `sellerFundedMinor`), read without a scan.
transferSchema.index({ fromUserId: 1, toUserId: 1 });
// The histories: a user's transfers sent and received, newest first.
transferSchema.index({ fromUserId: 1, createdAt: -1 });
transferSchema.index({ toUserId: 1, createdAt: -1 });
// The same in the page's full order (`_id` breaks ties; `all` merges the two in that order): the
// two above are then redundant (kept while a previous release may run: README "Indexes").
transferSchema.index({ fromUserId: 1, createdAt: -1, _id: -1 });
transferSchema.index({ toUserId: 1, createdAt: -1, _id: -1 });

const holdSchema = new Schema<BookingHoldDoc>(
  {
    _id: { type: String, required: true },
    buyerId: { type: String, required: true, index: true },
    buyerWalletId: { type: String, default: null },
    sellerId: { type: String, required: true, index: true },
    amountMinor: { type: Number, required: true },
    currency: { type: String, required: true },
    status: { type: String, required: true, index: true },
    endsAt: { type: Date, default: null },
    dueAt: { type: Date, default: null },
    correlationId: { type: String, default: null },
    consultationId: { type: String, default: null },
    history: freeFormArrayField,
    hold: { type: String, default: 'none' },
    settlement: { type: Schema.Types.Mixed, default: null },
    release: { type: String, default: 'none' },
    credit: { type: String, default: 'none' },
    fee: { type: String, default: 'none' },
    settledAt: { type: Date, default: null },
    opsForgotten: { type: Boolean, default: false },
    resumeFailures: { type: Number, default: 0 },
    moving: { type: Boolean, default: false },
    disputed: { type: Boolean, default: false, index: true },
    dispute: { type: Schema.Types.Mixed, default: null },
    pendingEvents: pendingEventsField,
  },
  { timestamps: true, versionKey: false },
);

// The admins' hold queue: open holds past their slot's end, and disputed ones, without a scan.
holdSchema.index({ status: 1, endsAt: 1 });
holdSchema.index({ disputed: 1, createdAt: 1 });
// The disputed queue in its page's full order (`_id` breaks ties); the one above is then redundant.
holdSchema.index({ disputed: 1, createdAt: 1, _id: 1 });
/**
 * The resume sweep's reads (every `SWEEP_INTERVAL_MS`): the Settling holds oldest move first, read
 * in order up to its limit (no sort in memory), and the ended ones of a window of `updatedAt`
 * (Rejected, Voided; Pending) without reading every hold that ever ended.
 */
holdSchema.index({ status: 1, updatedAt: 1 }, { name: HOLD_MOVED_INDEX });
// A seller's open holds (earnings: ahead and settling).
holdSchema.index({ sellerId: 1, status: 1 });

/** One counter per user, window and period, e.g. `u1:daily:2026-11-21` (kit's WindowedCounter). */
const usageSchema = windowedCounterSchema();
const idempotencySchema = idempotencyRecordSchema();

/** The wallet's models on `db` (its collections as named since the first release). */
export function walletModels(db: Connection) {
  return {
    Wallet: db.model<WalletDoc>('Wallet', walletSchema, 'wallets'),
    LedgerEntry: db.model<LedgerEntryDoc>('LedgerEntry', ledgerSchema, 'ledger_entries'),
    TopUp: db.model<TopUpDoc>('TopUp', topUpSchema, 'topups'),
    Payout: db.model<PayoutDoc>('Payout', payoutSchema, 'payouts'),
    Transfer: db.model<TransferDoc>('Transfer', transferSchema, 'transfers'),
    BookingHold: db.model<BookingHoldDoc>('BookingHold', holdSchema, 'booking_holds'),
    Usage: db.model<WindowedCounterDoc>('Usage', usageSchema, 'usage_counters'),
    IdempotencyRecord: db.model<IdempotencyRecordDoc>('IdempotencyRecord', idempotencySchema, 'idempotency_keys'),
  };
}

export type WalletModels = ReturnType<typeof walletModels>;

/** Every model, for the runtime's index build. */
export const allModels = (models: WalletModels) => Object.values(models);
