import type { Express } from 'express';
import { authenticate, createService, type Runtime } from '@mkt/kit';
import type { CatalogConfig } from './config';

export interface AppDeps {
  config: Readonly<CatalogConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness'>;
}

/** Every path the gateway routes here needs a verified token; endpoints come with their issue. */
export function createApp({ config, runtime }: AppDeps): Express {
  return createService({
    name: 'catalog',
    log: runtime.log,
    readiness: runtime.readiness,
    routes: (app) => {
      app.use(['/physical-products', '/v1/products', '/v1/shops'], authenticate(config.JWT_PUBLIC_KEY));
    },
  });
}
