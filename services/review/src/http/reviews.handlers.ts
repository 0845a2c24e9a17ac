import { CreateReviewBody, ReviewParams, ReviewsByEntityQuery, UpdateReviewBody, ok } from '@mkt/contracts';
import { adminRequestOf, correlationIdOf, currentUser, handle, type MountOptions } from '@mkt/kit';
import type { Reviews } from '../application/reviews';

/** One handler per entry of the review service in the contracts' endpoint table. */
export function reviewHandlers(reviews: Reviews): MountOptions['handlers'] {
  return {
    'GET /reviews/by-entity': handle({ query: ReviewsByEntityQuery }, async (input, _req, res) => {
      const { entityType, entityId, ...page } = input.query;
      const { reviews: items, averageRating, totalReviews, pagination } = await reviews.byEntity(entityType, entityId, page);
      res.json(ok({ reviews: items, averageRating, totalReviews, pagination }));
    }),
    'POST /reviews': handle({ body: CreateReviewBody }, async (input, req, res) => {
      const r = await reviews.create(currentUser(req), input.body, correlationIdOf(req));
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
      res.json(ok(data, 'Review created'));
    }),
    'GET /reviews/consultation/{id}/status': handle({ params: ReviewParams }, async (input, req, res) => {
      res.json(ok(await reviews.status(currentUser(req), input.params.id)));
    }),
    'PATCH /reviews/{id}': handle({ params: ReviewParams, body: UpdateReviewBody }, async (input, req, res) => {
      const r = await reviews.setActive(currentUser(req), input.params.id, input.body.isActive, adminRequestOf(req));
      res.json(
        ok({ reviewId: r._id, referenceId: r.referenceId, isActive: r.isActive, updatedAt: r.updatedAt.toISOString() }, 'Review updated'),
      );
    }),
  };
}
