import type { ListedReview } from '../application/reviews.use-cases';
import type { ReviewDoc } from '../domain/records';

/** A review as `GET /reviews/by-entity` lists it. */
export function toListedReview({ review: r, reviewerName, countsInRating, verifiedPurchase }: ListedReview) {
  return {
    id: r._id,
    referenceId: r.referenceId,
    rating: r.rating,
    comment: r.comment,
    reviewerName,
    countsInRating,
    verifiedPurchase,
    createdAt: r.createdAt.toISOString(),
  };
}

/** A new review as `POST /reviews` answers it. */
export function toCreatedReview(r: ReviewDoc) {
  return {
    reviewId: r._id,
    referenceId: r.referenceId,
    entityType: r.entityType,
    entityId: r.entityId,
    rating: r.rating,
    comment: r.comment,
    isActive: r.isActive,
    createdAt: r.createdAt.toISOString(),
  };
}

/** A review's visibility as `PATCH /reviews/{id}` answers it. */
export function toReviewActiveView(r: ReviewDoc) {
  return { reviewId: r._id, referenceId: r.referenceId, isActive: r.isActive, updatedAt: r.updatedAt.toISOString() };
}
