import type { Express } from 'express';
import { authenticate, createService, type Runtime } from '@mkt/kit';
import type { CatalogParts } from './composition';
import type { CatalogConfig } from './config';
import { productsRouter } from './http/products.router';
import { shopsRouter, v1ProductsRouter } from './http/v1.router';

export interface AppDeps {
  config: Readonly<CatalogConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness'>;
  parts: CatalogParts;
}

/** The catalog's HTTP: `/physical-products` (reads public) and the `/v1` groups (a token). */
export function createApp({ config, runtime, parts }: AppDeps): Express {
  const auth = authenticate(config.JWT_PUBLIC_KEY);
  return createService({
    name: 'catalog',
    log: runtime.log,
    readiness: runtime.readiness,
    routes: (app) => {
      app.use('/physical-products', productsRouter(parts.products, parts.categories, config.JWT_PUBLIC_KEY));
      app.use('/v1/shops', auth, shopsRouter(parts.shops));
      app.use('/v1/products', auth, v1ProductsRouter(parts.shops));
    },
  });
}
