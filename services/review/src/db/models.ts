import { Schema, type Connection } from 'mongoose';
import { pendingEventsField } from '@mkt/kit/bus';
import type { EligibilityDoc, PaymentDoc, ReviewDoc, ReviewerDoc } from '../domain/records';

const reviewSchema = new Schema<ReviewDoc>(
  {
    _id: String,
    referenceId: { type: String, required: true, unique: true },
    entityType: { type: String, required: true },
    entityId: { type: String, required: true },
    reviewerId: { type: String, required: true },
    reviewerNameSnapshot: { type: String, default: '' },
    rating: { type: Number, required: true },
    comment: { type: String, default: '' },
    isActive: { type: Boolean, default: true },
    countsInRating: { type: Boolean },
    visibilityChanges: { type: Number, default: 0 },
    pendingEvents: pendingEventsField,
  },
  { timestamps: true, versionKey: false },
);
// One review per reviewer and entity: of two racing posts, the unique key lets one in.
reviewSchema.index({ reviewerId: 1, entityType: 1, entityId: 1 }, { unique: true });
reviewSchema.index({ entityType: 1, entityId: 1, isActive: 1, createdAt: -1 });

/**
 * The name of the eligibility index on `consultationReferenceId`: a public listing of a
 * consultation's reviews by its reference finds the consultation's id through it
 * (0002-consultation-reference-index builds it on a database made before).
 */
export const CONSULTATION_REFERENCE_INDEX = 'consultationReferenceId_1';

const eligibilitySchema = new Schema<EligibilityDoc>(
  {
    _id: String,
    consultationId: String,
    consultationReferenceId: { type: String, default: null },
    buyerId: { type: String, index: true },
    sessionIds: { type: [String], default: [] },
    paid: { type: Boolean },
  },
  { versionKey: false },
);
/**
 * Every public listing of a consultation's reviews asks which consultation its key names
 * (`consultationIdOf`): without this index that was a scan of every buyer's eligibility, and a key
 * that is no reference (an id) read them all. Plain, not sparse: the field defaults to null.
 */
eligibilitySchema.index({ consultationReferenceId: 1 }, { name: CONSULTATION_REFERENCE_INDEX });

const paymentSchema = new Schema<PaymentDoc>(
  {
    _id: String,
    buyerId: { type: String, required: true },
    consultationId: String,
    paidMinor: Number,
    listMinor: Number,
    capturedMinor: Number,
    sellerFundedMinor: Number,
  },
  { versionKey: false },
);
paymentSchema.index({ consultationId: 1, buyerId: 1 });

const reviewerSchema = new Schema<ReviewerDoc>({ _id: String, fullName: String }, { versionKey: false });

/** The review service's models, bound to its connection (no process-global models). */
export function reviewModels(db: Connection) {
  return {
    Review: db.model<ReviewDoc>('Review', reviewSchema, 'reviews'),
    Eligibility: db.model<EligibilityDoc>('Eligibility', eligibilitySchema, 'eligibility'),
    Reviewer: db.model<ReviewerDoc>('Reviewer', reviewerSchema, 'users'),
    Payment: db.model<PaymentDoc>('Payment', paymentSchema, 'payments'),
  };
}
export type ReviewModels = ReturnType<typeof reviewModels>;
