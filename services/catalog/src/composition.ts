import type { Logger, RunOptions } from '@mkt/kit';
import { createApp } from './app';
import type { CatalogConfig } from './config';
import { Product } from './db/product.model';
import { Shop, V1Product } from './db/shop.model';

/** How the catalog is put together (main.ts and the component tests). */
export function catalogService(config: Readonly<CatalogConfig>, log: Logger): RunOptions {
  return { name: 'catalog', config, log, models: [Product, Shop, V1Product], createApp: (runtime) => createApp({ config, runtime }) };
}
