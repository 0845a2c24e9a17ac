import type { RequestHandler, Router } from 'express';
import { CreateReviewBody, ReviewParams, ReviewsByEntityQuery, UpdateReviewBody, ok } from '@mkt/contracts';
import { correlationIdOf, currentUser, serviceRouter, withInput } from '@mkt/kit';
import type { Reviews } from '../domain/reviews';

export function reviewsRouter(reviews: Reviews, auth: RequestHandler): Router {
  const router = serviceRouter();
  router.get(
    '/by-entity',
    withInput({ query: ReviewsByEntityQuery }, async (input, _req, res) => {
      const { entityType, entityId, ...page } = input.query;
      const { reviews: items, averageRating, totalReviews, pagination } = await reviews.byEntity(entityType, entityId, page);
      res.json(ok({ reviews: items, averageRating, totalReviews, pagination }));
    }),
  );
  router.post(
    '/',
    auth,
    withInput({ body: CreateReviewBody }, async (input, req, res) => {
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
  );
  router.get(
    '/consultation/:id/status',
    auth,
    withInput({ params: ReviewParams }, async (input, req, res) => {
      res.json(ok(await reviews.status(currentUser(req), input.params.id)));
    }),
  );
  router.patch(
    '/:id',
    auth,
    withInput({ params: ReviewParams, body: UpdateReviewBody }, async (input, req, res) => {
      const r = await reviews.setActive(currentUser(req), input.params.id, input.body.isActive, correlationIdOf(req));
      res.json(
        ok({ reviewId: r._id, referenceId: r.referenceId, isActive: r.isActive, updatedAt: r.updatedAt.toISOString() }, 'Review updated'),
      );
    }),
  );
  router.use(auth);
  return router;
}
