import type { IntegrationEvent, ReviewEntityType } from '@mkt/contracts/review';

/**
 * The review service's stored records as the domain and the repositories read them (what
 * `db/models.ts` stores). Plain types: the schemas are typed by them, the decisions take them in.
 */

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

export interface ReviewerDoc {
  _id: string;
  fullName: string;
}
