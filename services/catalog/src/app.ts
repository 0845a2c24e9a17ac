import type { Express } from 'express';
import { authenticate, createService, type Runtime } from '@mkt/kit';
import type { CatalogConfig } from './config';
import { buildCategories } from './domain/categories';
import { Products } from './domain/products';
import { productsRouter } from './http/products.router';
import { shopsRouter, v1ProductsRouter } from './http/v1.router';

export interface AppDeps {
  config: Readonly<CatalogConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness'>;
}

export function createApp({ config, runtime }: AppDeps): Express {
  const categories = buildCategories(config.REF_PREFIX);
  const products = new Products(categories, config.REF_PREFIX);
  const auth = authenticate(config.JWT_PUBLIC_KEY);
  return createService({
    name: 'catalog',
    log: runtime.log,
    readiness: runtime.readiness,
    routes: (app) => {
      app.use('/physical-products', productsRouter(products, categories, config.JWT_PUBLIC_KEY));
      app.use('/v1/shops', auth, shopsRouter());
      app.use('/v1/products', auth, v1ProductsRouter());
    },
  });
}
