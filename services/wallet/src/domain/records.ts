import type { BookingHoldStatus, IntegrationEvent, PaymentMethod, PayoutStatus, Role, TopUpStatus } from '@mkt/contracts/wallet';

/**
 * The wallet's records as the domain reads them (what `db/models.ts` stores). Plain types: the
 * decisions take them in and answer what to write; the repositories read and write them.
 */

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
  /** Spendable: every applied op's available delta, less what ops in flight take from it. */
  availableMinor: number;
  /** Held for payouts and bookings: every applied op's held delta, less what ops in flight take from it. */
  heldMinor: number;
  /**
   * Ops in flight (`WalletRepository.escrow`): what each takes is out of the balances already,
   * what it adds is not in yet. Each leaves the array when its ledger entry decides it (commit)
   * or finds the op applied before (rollback); a crash leaves it to the sweep. At most one per op id.
   */
  inflight: InflightOp[];
  /** Sum of what the ops in flight add (available and held): counted against the ceiling. */
  inflightInMinor: number;
  /** Sum of what the ops in flight take: counted against the ceiling too (a rollback gives it back). */
  inflightOutMinor: number;
  /**
   * `false` on a wallet of this protocol (op ids live in `ledger_entries`, not here). Not an
   * array on purpose: a process of the previous release, which pushed op ids here, fails on
   * such a wallet instead of applying an op without looking in the ledger. A wallet that still
   * has the array (and `doneOps`, `pendingEntries`) is migrated before any op reaches it.
   */
  appliedOps: false | string[];
  /** A wallet of the previous release only: its entries not in the ledger yet (the migration moves them there). */
  pendingEntries?: LedgerEntry[];
  /** A wallet of the previous release only: op ids it had finished (dropped by the migration). */
  doneOps?: string[];
  createdAt: Date;
  updatedAt: Date;
}

/** An op on its way into a wallet: its ledger entry and the run that took its amounts (`token`). */
export interface InflightOp extends LedgerEntry {
  token: string;
}

/** A wallet as readers of balances see it (without its in-flight ops and protocol marker). */
export type WalletSummary = Omit<
  WalletDoc,
  'appliedOps' | 'inflight' | 'inflightInMinor' | 'inflightOutMinor' | 'pendingEntries' | 'doneOps'
>;

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

/** An op checked by `boundedOp`: safe amounts, and the ceiling it is held to. */
export type BoundedOp = WalletOp & { ceilingMinor: number };

/**
 * What applying an op did: `applied` by this call, a `repeat` (applied before, or by another
 * run of the same step at the same time), or refused (nothing changed).
 */
export type ApplyOutcome = { kind: 'applied' } | { kind: 'repeat' } | { kind: 'insufficient_funds' } | { kind: 'ceiling_exceeded' };

/** A wallet step a record still owes (applied to the wallet, or about to be). */
export type StepState = 'none' | 'pending' | 'done';

export interface TopUpDoc {
  _id: string;
  referenceId: string;
  walletId: string;
  userId: string;
  amountMinor: number;
  currency: string;
  paymentMethod: PaymentMethod;
  provider: string;
  status: TopUpStatus;
  paymentUrl: string;
  redirectUrl: string;
  notes: string | null;
  checkoutTokenHash: string | null;
  /** Hash of the token in the provider's return address (kept after completion). */
  returnTokenHash: string | null;
  expiresAt: Date;
  completedAt: Date | null;
  credit: StepState;
  pendingEvents: IntegrationEvent[];
  createdAt: Date;
  updatedAt: Date;
}

export interface PayoutHistoryEntry {
  action: string;
  from: PayoutStatus | null;
  to: PayoutStatus;
  byUserId: string;
  byRole: Role;
  at: Date;
  notes: string | null;
}

export interface PayoutDoc {
  _id: string;
  referenceId: string;
  walletId: string;
  userId: string;
  amountMinor: number;
  currency: string;
  bankCode: string;
  accountNumber: string;
  accountName: string;
  reason: string;
  status: PayoutStatus;
  adminNotes: string | null;
  processedAt: Date | null;
  /** The hold taken at creation, and the release or settlement at the end. */
  hold: StepState;
  finish: StepState;
  /** Who asked for it (always the owner), and every move since: the audit trail. */
  requestedBy: string | null;
  history: PayoutHistoryEntry[];
  pendingEvents: IntegrationEvent[];
  createdAt: Date;
  updatedAt: Date;
}

export type TransferStatus = 'Pending' | 'Debited' | 'Completed' | 'Failed';

export interface TransferDoc {
  _id: string;
  fromWalletId: string;
  toWalletId: string;
  fromUserId: string;
  toUserId: string;
  amountMinor: number;
  currency: string;
  status: TransferStatus;
  completedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type SettlementKind = 'capture' | 'cancel' | 'void';

/** How a hold ends, decided once: what goes back to the buyer, to the seller, to the platform. */
export interface Settlement {
  kind: SettlementKind;
  refundMinor: number;
  captureMinor: number;
  feeMinor: number;
  decidedAt: Date;
  /** The correlation id of what decided it (the event or request); the sweep's late steps carry it on. */
  correlationId?: string;
  /** An admin voided the hold by hand (its refund event says so: the consultation cancels the booking). */
  byAdmin?: boolean;
  /** A capture for a no-show: it waits out the dispute window after the slot's end. */
  noShow?: boolean;
}

/** The buyer's dispute of a no-show, and the admin's decision that let the capture go on (if so). */
export interface HoldDispute {
  reason: string;
  at: Date;
  resolvedBy?: string;
  resolvedAt?: Date;
  resolution?: 'capture_upheld';
  resolutionReason?: string;
}

/** A hand-made change of a hold, for the audit: who, when, why. */
export interface BookingHoldHistoryEntry {
  action: 'void';
  by: string;
  at: Date;
  reason: string;
}

/**
 * The money of one paid booking, keyed by the booking id (one per booking, whatever is
 * retried). Steps as everywhere in the wallet: `hold` on the buyer's wallet; then, once the
 * settlement is decided, `release` on the buyer's (held → refund, or out), `credit` on the
 * seller's and `fee` on the platform's, each applied once by its op id and then recorded here.
 */
export interface BookingHoldDoc {
  _id: string;
  buyerId: string;
  buyerWalletId: string | null;
  sellerId: string;
  amountMinor: number;
  currency: string;
  status: BookingHoldStatus;
  /** The booked slot's end (null from a consultation of the previous release): no capture before it. */
  endsAt: Date | null;
  /** When a decided settlement's money may move: the slot's end for a capture decided before it; null: at once. */
  dueAt: Date | null;
  /** The booking's correlation id (consultation's `x-correlation-id` on the hold): its events and logs carry it. */
  correlationId: string | null;
  /** The booked consultation (null: a hold asked for before the consultation named it). */
  consultationId?: string | null;
  history: BookingHoldHistoryEntry[];
  hold: StepState;
  settlement: Settlement | null;
  release: StepState;
  credit: StepState;
  fee: StepState;
  settledAt: Date | null;
  /** Tries of the sweep that failed to carry the settlement out (each one moves `updatedAt` on). */
  resumeFailures?: number;
  /**
   * The settlement's money has begun to move (set in one conditional write before its first
   * step): from then on its decision is final; before, an admin may still void a capture.
   */
  moving?: boolean;
  /** The buyer disputes the no-show: a capture waits for an admin's decision while it is set. */
  disputed?: boolean;
  dispute?: HoldDispute | null;
  /** The wallets have forgotten this booking's op ids (long after the settlement ended). */
  opsForgotten?: boolean;
  pendingEvents: IntegrationEvent[];
  createdAt: Date;
  updatedAt: Date;
}

export interface LedgerEntryDoc {
  _id: string;
  walletId: string;
  type: LedgerEntryType;
  availableDeltaMinor: number;
  heldDeltaMinor: number;
  reference: string;
  createdAt: Date;
  /** The run whose in-flight op this entry decided (entries of the previous release have none). */
  token?: string;
  /**
   * The entry's place in its wallet's chain (1, 2, …, no gap): unique per wallet, written once
   * with the entry, never changed — the statement's sort and cursor key. Entries written before
   * the chain have none (`backfillLedgerChain` numbers them 0, −1, … back from the newest).
   */
  seq?: number;
  /** `${walletId}:${seq}`: the unique key that lets one entry only take each place in the chain. */
  chainKey?: string;
  /** The wallet's available and held balances once this entry and every one before it in the chain apply. */
  availableAfterMinor?: number;
  heldAfterMinor?: number;
  /** When the entry was written: never before its predecessor's, so a date range is a range of `seq`. */
  postedAt?: Date;
}
