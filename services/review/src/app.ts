import type { Express } from 'express';
import { ENDPOINTS } from '@mkt/contracts/review';
import { createService, mountEndpoints } from '@mkt/kit/http';
import type { Runtime } from '@mkt/kit/runtime';
import type { Reviews } from './application/reviews.use-cases';
import type { ReviewConfig } from './config';
import { reviewHandlers } from './http/reviews.handlers';

export interface AppDeps {
  config: Readonly<ReviewConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness' | 'accessKeys'>;
  reviews: Reviews;
}

/**
 * The review entries of the contracts' endpoint table: `GET /reviews/by-entity` is public, the
 * rest needs a token, and so does anything else under `/reviews` before it hears 404 or 405.
 */
export function createApp({ runtime, reviews }: AppDeps): Express {
  return createService({
    name: 'review',
    log: runtime.log,
    readiness: runtime.readiness,
    routes: (app) =>
      mountEndpoints(app, {
        service: 'review',
        tables: [ENDPOINTS],
        publicKey: runtime.accessKeys,
        guardedPrefixes: ['/reviews'],
        handlers: reviewHandlers(reviews),
      }),
  });
}
