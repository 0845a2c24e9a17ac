import type { RequestHandler, Router } from 'express';
import { serviceRouter } from '@mkt/kit';
import type { Setup } from '../application/setup';
import { pricingRouter } from './pricing.router';
import { ruleSetsRouter } from './rule-sets.router';
import { visibilityRouter } from './visibility.router';

/**
 * Rule sets, pricing, discounts and visibility. The token is checked here, on the same
 * case-sensitive, strict matching as the routes of the routers it mounts: no spelling of a path
 * reaches a handler without it.
 */
export function setupRouter(auth: RequestHandler, setup: Setup): Router {
  const router = serviceRouter();
  router.use(['/availability-rule-sets', '/pricing', '/visibility'], auth);
  router.use(ruleSetsRouter(setup), pricingRouter(setup), visibilityRouter(setup));
  return router;
}
