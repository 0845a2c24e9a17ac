import { OPERATIONS } from '@mkt/contracts/review';
import { adminRequestOf, correlationIdOf, operationHandlers, type MountedHandlers } from '@mkt/kit/http';
import type { Reviews } from '../application/reviews.use-cases';
import { toCreatedReview, toListedReview, toReviewActiveView } from './views';

/** One handler per operation of the review service in the contracts' table (its input and answer typed by the entry). */
export function reviewHandlers(reviews: Reviews): MountedHandlers {
  return operationHandlers(OPERATIONS, 'review', {
    listReviewsByEntity: async ({ query }) => {
      const { entityType, entityId, ...page } = query;
      const { reviews: items, averageRating, totalReviews, pagination } = await reviews.byEntity(entityType, entityId, page);
      return { data: { reviews: items.map(toListedReview), averageRating, totalReviews, pagination } };
    },
    createReview: async ({ body }, { req, user }) => {
      const r = await reviews.create(user, body, correlationIdOf(req));
      return { data: toCreatedReview(r), message: 'Review created' };
    },
    getReviewStatus: async ({ params }, { user }) => ({ data: await reviews.status(user, params.id) }),
    setReviewActive: async ({ params, body }, { req, user }) => {
      const r = await reviews.setActive(user, params.id, body.isActive, adminRequestOf(req));
      return { data: toReviewActiveView(r), message: 'Review updated' };
    },
  });
}
