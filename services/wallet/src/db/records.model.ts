import mongoose, { Schema } from 'mongoose';
import type { IntegrationEvent, PaymentMethod, PayoutStatus, TopUpStatus } from '@mkt/contracts';
import {
  freeFormArrayField,
  idempotencyRecordSchema,
  pendingEventsField,
  windowedCounterSchema,
  type IdempotencyRecordDoc,
  type WindowedCounterDoc,
} from '@mkt/kit';

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
export const TopUp = mongoose.model<TopUpDoc>('TopUp', topUpSchema, 'topups');

export interface PayoutHistoryEntry {
  action: string;
  from: string | null;
  to: string;
  byUserId: string;
  byRole: string;
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
export const Payout = mongoose.model<PayoutDoc>('Payout', payoutSchema, 'payouts');

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
export const Transfer = mongoose.model<TransferDoc>('Transfer', transferSchema, 'transfers');

/** One counter per user, window and period, e.g. `u1:daily:2026-11-21` (kit's WindowedCounter). */
export const Usage = mongoose.model<WindowedCounterDoc>('Usage', windowedCounterSchema(), 'usage_counters');

export const IdempotencyRecord = mongoose.model<IdempotencyRecordDoc>('IdempotencyRecord', idempotencyRecordSchema(), 'idempotency_keys');
