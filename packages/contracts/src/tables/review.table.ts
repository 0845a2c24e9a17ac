import { ReviewCreatedResponse, ReviewStatusResponse, ReviewUpdatedResponse, ReviewsByEntityResponse } from '../responses/review';
import { CreateReviewBody, ReviewParams, ReviewsByEntityQuery, UpdateReviewBody } from '../review';
import { e, linksTo } from './table';

// The review's operations.

/** The review's public operations. */
export const REVIEW_TABLE = [
  e('post', '/reviews', 'review', 'bearer', 'createReview', 'Review a consultation', {
    errors: { 409: true, 422: ['not_eligible'] },
    body: CreateReviewBody,
    example: { entityType: 'consultation_service', entityId: 'MKT-CON-7Q2M9XKD', rating: 5, comment: 'Clear and practical' },
    data: ReviewCreatedResponse,
    links: linksTo('/data/reviewId', 'id', 'patch /reviews/{id}'),
  }),
  e('get', '/reviews/by-entity', 'review', 'public', 'listReviewsByEntity', 'Reviews of an entity', {
    query: ReviewsByEntityQuery,
    data: ReviewsByEntityResponse,
  }),
  e('get', '/reviews/consultation/{id}/status', 'review', 'bearer', 'getReviewStatus', 'May the caller review?', {
    params: ReviewParams,
    data: ReviewStatusResponse,
  }),
  e('patch', '/reviews/{id}', 'review', 'bearer', 'setReviewActive', 'Switch a review on or off', {
    errors: { 403: true, 409: ['invalid_state'] },
    params: ReviewParams,
    body: UpdateReviewBody,
    example: { isActive: false },
    data: ReviewUpdatedResponse,
  }),
] as const;
