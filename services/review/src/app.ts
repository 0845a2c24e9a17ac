import type { Express } from 'express';
import { authenticate, createService, type Runtime } from '@mkt/kit';
import type { ReviewConfig } from './config';

export interface AppDeps {
  config: Readonly<ReviewConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness'>;
}

/** Every path the gateway routes here needs a verified token; endpoints come with their issue. */
export function createApp({ config, runtime }: AppDeps): Express {
  return createService({
    name: 'review',
    log: runtime.log,
    readiness: runtime.readiness,
    routes: (app) => {
      app.use(['/reviews'], authenticate(config.JWT_PUBLIC_KEY));
    },
  });
}
