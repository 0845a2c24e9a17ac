import { Schema, type Connection } from 'mongoose';
import type { IntegrationEvent, ReviewEntityType } from '@mkt/contracts';
import { pendingEventsField } from '@mkt/kit/bus';

export interface ReviewDoc {
  _id: string;
  referenceId: string;
  entityType: ReviewEntityType;
  entityId: string;
  reviewerId: string;
  /** The reviewer's name from the token, for when the users projection has none. */
  reviewerNameSnapshot: string;
  rating: number;
  comment: string;
  isActive: boolean;
  /**
   * False for a review by a buyer who has only had free places of the consultation: listed, but
   * out of the public average and count. Turns true once the buyer completes a paid session.
   * Absent (written before the rule): counts.
   */
  countsInRating?: boolean;
  /** How many times `isActive` changed: the `sequence` of `review.visibility_changed`. */
  visibilityChanges: number;
  pendingEvents: IntegrationEvent[];
  createdAt: Date;
  updatedAt: Date;
}
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

/** Who completed a session of which consultation (from consultation.session.completed). */
export interface EligibilityDoc {
  _id: string;
  consultationId: string;
  consultationReferenceId: string | null;
  buyerId: string;
  sessionIds: string[];
  /**
   * Whether the buyer paid for a place in any completed session of the consultation (from
   * `paidBuyerIds`); once true it stays. Absent (recorded before the rule): paid.
   */
  paid?: boolean;
}
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
 * One paid booking (id `bk_…`): what it cost and its list price (from the completed session),
 * and what the wallet captured of it and how much of that the buyer had received from the seller
 * (from the capture). Either side may arrive first; each sets its own fields.
 */
export interface PaymentDoc {
  _id: string;
  buyerId: string;
  consultationId?: string;
  paidMinor?: number;
  listMinor?: number;
  capturedMinor?: number;
  sellerFundedMinor?: number;
}
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

export interface ReviewerDoc {
  _id: string;
  fullName: string;
}
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
