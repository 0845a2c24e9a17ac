import type { Express } from 'express';
import { authenticate, createService, type OutboxRelay, type Runtime } from '@mkt/kit';
import type { ReviewConfig } from './config';
import { Reviews } from './domain/reviews';
import { reviewsRouter } from './http/reviews.router';

export interface AppDeps {
  config: Readonly<ReviewConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness'> & { outbox: OutboxRelay };
}

/** `GET /reviews/by-entity` is public; everything else needs a token. */
export function createApp({ config, runtime }: AppDeps): Express {
  const reviews = new Reviews(runtime.outbox, runtime.log);
  return createService({
    name: 'review',
    log: runtime.log,
    readiness: runtime.readiness,
    routes: (app) => {
      app.use('/reviews', reviewsRouter(reviews, authenticate(config.JWT_PUBLIC_KEY)));
    },
  });
}
