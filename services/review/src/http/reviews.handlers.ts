import { OPERATIONS } from '@mkt/contracts';
import { adminRequestOf, correlationIdOf, operationHandlers, type MountedHandlers } from '@mkt/kit/http';
import type { Reviews } from '../application/reviews';

/** One handler per operation of the review service in the contracts' table (its input and answer typed by the entry). */
export function reviewHandlers(reviews: Reviews): MountedHandlers {
  return operationHandlers(OPERATIONS, 'review', {
    listReviewsByEntity: async ({ query }) => {
      const { entityType, entityId, ...page } = query;
      const { reviews: items, averageRating, totalReviews, pagination } = await reviews.byEntity(entityType, entityId, page);
      return { data: { reviews: items, averageRating, totalReviews, pagination } };
    },
    createReview: async ({ body }, { req, user }) => {
      const r = await reviews.create(user, body, correlationIdOf(req));
      const data = {
        reviewId: r._id,
        referenceId: r.referenceId,
        entityType: r.entityType,
        entityId: r.entityId,
        rating: r.rating,
        comment: r.comment,
        isActive: r.isActive,
        createdAt: r.createdAt.toISOString(),
      };
      return { data, message: 'Review created' };
    },
    getReviewStatus: async ({ params }, { user }) => ({ data: await reviews.status(user, params.id) }),
    setReviewActive: async ({ params, body }, { req, user }) => {
      const r = await reviews.setActive(user, params.id, body.isActive, adminRequestOf(req));
      return {
        data: { reviewId: r._id, referenceId: r.referenceId, isActive: r.isActive, updatedAt: r.updatedAt.toISOString() },
        message: 'Review updated',
      };
    },
  });
}
