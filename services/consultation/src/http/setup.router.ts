import type { RequestHandler, Router } from 'express';
import { serviceRouter } from '@mkt/kit';
import type { References } from '../domain/access';
import { pricingRouter } from './pricing.router';
import { ruleSetsRouter } from './rule-sets.router';
import { visibilityRouter } from './visibility.router';

/**
 * Rule sets, pricing, discounts and visibility. The token is checked here, on the same
 * case-sensitive, strict matching as the routes of the routers it mounts: no spelling of a path
 * reaches a handler without it.
 */
export function setupRouter(auth: RequestHandler, references: References): Router {
  const router = serviceRouter();
  router.use(['/availability-rule-sets', '/pricing', '/visibility'], auth);
  router.use(ruleSetsRouter(references), pricingRouter(), visibilityRouter());
  return router;
}
