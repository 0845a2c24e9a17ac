import mongoose, { Schema } from 'mongoose';
import type { IntegrationEvent, SessionStatus } from '@mkt/contracts';
import { freeFormArrayField, idempotencyRecordSchema, pendingEventsField, type IdempotencyRecordDoc } from '@mkt/kit';

/**
 * Places are counted on one document per slot (and per day), keyed by what they count: the
 * guard `booked ≤ capacity − places` is in the update's filter, and a full place document
 * makes the upsert collide with itself — so of racing bookings for the last place, one wins.
 * `bookingIds` makes taking and giving back a place idempotent.
 */
export interface PlaceDoc {
  _id: string;
  consultationId: string;
  booked: number;
  bookingIds: string[];
  /** The slot's session left Scheduled (started, no-show, expired): it takes no booking again. */
  closed?: boolean;
}
const placeSchema = new Schema<PlaceDoc>(
  {
    _id: String,
    consultationId: String,
    booked: { type: Number, default: 0 },
    bookingIds: { type: [String], default: [] },
    closed: { type: Boolean, default: false },
  },
  { versionKey: false },
);
export const SlotPlace = mongoose.model<PlaceDoc>('SlotPlace', placeSchema, 'slot_places');
export const DayPlace = mongoose.model<PlaceDoc>('DayPlace', placeSchema.clone(), 'day_places');

/**
 * Pending: taking its places. PaymentPending: places taken, the wallet's hold not yet answered
 * (the sweep asks again, or gives it up at its deadline). Confirmed: paid (or free). Failed:
 * not paid or not placed; its places are given back.
 */
export type BookingStatus = 'Pending' | 'PaymentPending' | 'Confirmed' | 'Cancelled' | 'Failed';
/**
 * free: nothing to pay; pending: the wallet asked; voiding: given up (deadline or the client's
 * cancel), the wallet's void under way — no confirm can happen any more; held: the wallet holds
 * the total; refused/voided: never paid.
 */
export type PaymentState = 'free' | 'pending' | 'voiding' | 'held' | 'refused' | 'declined' | 'voided';

export interface BookingDoc {
  _id: string;
  referenceId: string;
  consultationId: string;
  ruleSetId: string;
  sellerId: string;
  buyerId: string;
  /** The buyer's USR reference: the wallet opens their wallet by it if need be. */
  buyerRef: string;
  status: BookingStatus;
  payment: PaymentState;
  /** A PaymentPending booking is given up (voided at the wallet) from this moment. */
  paymentDeadline: Date | null;
  consultationTitle: string;
  date: string;
  startTime: string;
  endTime: string;
  startsAt: Date;
  endsAt: Date;
  slotKey: string;
  dayKey: string;
  places: number;
  participants: Array<{ fullName: string; email: string; phone: string }>;
  subTotalMinor: number;
  totalAmountMinor: number;
  currency: string;
  couponId: string | null;
  notes: string | null;
  sessionId: string | null;
  refundStatus: 'Pending' | 'Refunded' | null;
  refundAmountMinor: number | null;
  refundedAt: Date | null;
  cancelledBy: 'buyer' | 'seller' | 'admin' | null;
  cancelledAt: Date | null;
  /** What the cancel request said: `reason`, `cancellationType` and `notes`. */
  cancelReason: string | null;
  cancellationType: string | null;
  cancelNotes: string | null;
  /** Why the service cancelled it by itself (`session_expired`, `voided_by_admin`); null when someone asked. */
  cancelCause: string | null;
  /** The correlation id of the request that made it: its later events and the sweep's logs carry it. */
  correlationId: string | null;
  /** Whether the places (and session seat) of a cancelled booking were given back. */
  released: boolean;
  pendingEvents: IntegrationEvent[];
  createdAt: Date;
  updatedAt: Date;
}
const bookingSchema = new Schema<BookingDoc>(
  {
    _id: String,
    referenceId: { type: String, required: true, unique: true },
    consultationId: { type: String, required: true },
    ruleSetId: { type: String, required: true, index: true },
    sellerId: { type: String, required: true, index: true },
    buyerId: { type: String, required: true, index: true },
    buyerRef: { type: String, default: '' },
    status: { type: String, required: true, index: true },
    payment: { type: String, default: 'free' },
    paymentDeadline: { type: Date, default: null },
    consultationTitle: String,
    date: String,
    startTime: String,
    endTime: String,
    startsAt: Date,
    endsAt: Date,
    slotKey: String,
    dayKey: String,
    places: Number,
    participants: freeFormArrayField,
    subTotalMinor: Number,
    totalAmountMinor: Number,
    currency: String,
    couponId: { type: String, default: null },
    notes: { type: String, default: null },
    sessionId: { type: String, default: null },
    refundStatus: { type: String, default: null },
    refundAmountMinor: { type: Number, default: null },
    refundedAt: { type: Date, default: null },
    cancelledBy: { type: String, default: null },
    cancelledAt: { type: Date, default: null },
    cancelReason: { type: String, default: null },
    cancellationType: { type: String, default: null },
    cancelNotes: { type: String, default: null },
    cancelCause: { type: String, default: null },
    correlationId: { type: String, default: null },
    released: { type: Boolean, default: false },
    pendingEvents: pendingEventsField,
  },
  { timestamps: true, versionKey: false },
);
export const Booking = mongoose.model<BookingDoc>('Booking', bookingSchema, 'bookings');

export interface SessionDoc {
  _id: string;
  referenceId: string;
  consultationId: string;
  sellerId: string;
  consultationTitle: string;
  startsAt: Date;
  endsAt: Date;
  /** The slot's place counter, closed when the session leaves Scheduled (older sessions: none stored). */
  slotKey: string | null;
  status: SessionStatus;
  bookingIds: string[];
  buyerIds: string[];
  participantCount: number;
  startedAt: Date | null;
  endedAt: Date | null;
  markedAt: Date | null;
  duration: number | null;
  notes: string | null;
  /** Marking a no-show: whether the seller tried to reach the client, and how (null: not said). */
  attemptedContact: boolean | null;
  contactMethod: string | null;
  sessionSummary: string | null;
  nextSteps: string | null;
  /** When the sweep found it never moved (status Expired). */
  expiredAt: Date | null;
  /** An Expired session whose Confirmed bookings are all cancelled (the sweep resumes until then). */
  expiryFinished: boolean;
  pendingEvents: IntegrationEvent[];
  createdAt: Date;
  updatedAt: Date;
}
const sessionSchema = new Schema<SessionDoc>(
  {
    _id: String,
    referenceId: { type: String, required: true, unique: true },
    consultationId: { type: String, required: true },
    sellerId: { type: String, required: true, index: true },
    consultationTitle: String,
    startsAt: { type: Date, required: true },
    endsAt: Date,
    slotKey: { type: String, default: null },
    status: { type: String, default: 'Scheduled' },
    bookingIds: { type: [String], default: [] },
    buyerIds: { type: [String], default: [] },
    participantCount: { type: Number, default: 0 },
    startedAt: { type: Date, default: null },
    endedAt: { type: Date, default: null },
    markedAt: { type: Date, default: null },
    duration: { type: Number, default: null },
    notes: { type: String, default: null },
    attemptedContact: { type: Boolean, default: null },
    contactMethod: { type: String, default: null },
    sessionSummary: { type: String, default: null },
    nextSteps: { type: String, default: null },
    expiredAt: { type: Date, default: null },
    expiryFinished: { type: Boolean, default: false },
    pendingEvents: pendingEventsField,
  },
  { timestamps: true, versionKey: false },
);
sessionSchema.index({ consultationId: 1, startsAt: 1 }, { unique: true });
export const Session = mongoose.model<SessionDoc>('Session', sessionSchema, 'sessions');

/** `Idempotency-Key`s of booking requests (`_id` = `user:booking:key`), kit's idempotent requests. */
export const BookingRequestKey = mongoose.model<IdempotencyRecordDoc>(
  'BookingRequestKey',
  idempotencyRecordSchema(),
  'booking_request_keys',
);
