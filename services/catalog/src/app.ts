import type { Express } from 'express';
import { ENDPOINTS } from '@mkt/contracts/catalog';
import { createService, mountEndpoints } from '@mkt/kit/http';
import type { Runtime } from '@mkt/kit/runtime';
import type { CatalogConfig } from './config';
import { catalogHandlers, type CatalogHttpParts } from './http/catalog.handlers';

export interface AppDeps {
  config: Readonly<CatalogConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness' | 'accessKeys'>;
  parts: CatalogHttpParts;
}

/**
 * The catalog's entries of the contracts' endpoint table. `/physical-products` reads are public
 * (a token is read when sent); anything else under it, and everything under `/v1/shops` and
 * `/v1/products`, needs a token before it hears 404 or 405.
 */
export function createApp({ runtime, parts }: AppDeps): Express {
  return createService({
    name: 'catalog',
    log: runtime.log,
    readiness: runtime.readiness,
    routes: (app) =>
      mountEndpoints(app, {
        service: 'catalog',
        tables: [ENDPOINTS],
        publicKey: runtime.accessKeys,
        guardedPrefixes: ['/physical-products', '/v1/shops', '/v1/products'],
        // These answered with and without their final slash (`{/}`, a router's root).
        optionalTrailingSlash: [
          'GET /physical-products/seller-products/',
          'POST /physical-products/seller-products/',
          'GET /v1/products',
          'POST /v1/products',
          'POST /v1/shops',
        ],
        handlers: catalogHandlers(parts),
      }),
  });
}
