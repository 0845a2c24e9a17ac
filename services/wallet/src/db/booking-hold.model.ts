import mongoose, { Schema } from 'mongoose';
import type { BookingHoldStatus, IntegrationEvent } from '@mkt/contracts';
import { freeFormArrayField, pendingEventsField } from '@mkt/kit';
import type { StepState } from './records.model';

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
  history: BookingHoldHistoryEntry[];
  hold: StepState;
  settlement: Settlement | null;
  release: StepState;
  credit: StepState;
  fee: StepState;
  settledAt: Date | null;
  /** Tries of the sweep that failed to carry the settlement out (each one moves `updatedAt` on). */
  resumeFailures?: number;
  /** The wallets have forgotten this booking's op ids (long after the settlement ended). */
  opsForgotten?: boolean;
  pendingEvents: IntegrationEvent[];
  createdAt: Date;
  updatedAt: Date;
}

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
    history: freeFormArrayField,
    hold: { type: String, default: 'none' },
    settlement: { type: Schema.Types.Mixed, default: null },
    release: { type: String, default: 'none' },
    credit: { type: String, default: 'none' },
    fee: { type: String, default: 'none' },
    settledAt: { type: Date, default: null },
    opsForgotten: { type: Boolean, default: false },
    resumeFailures: { type: Number, default: 0 },
    pendingEvents: pendingEventsField,
  },
  { timestamps: true, versionKey: false },
);
export const BookingHold = mongoose.model<BookingHoldDoc>('BookingHold', holdSchema, 'booking_holds');
