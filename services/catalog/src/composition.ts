import mongoose from 'mongoose';
import type { Logger, RunOptions } from '@mkt/kit';
import { createApp } from './app';
import { ProductService } from './application/products';
import { ShopService } from './application/shops';
import type { CatalogConfig } from './config';
import { allModels, catalogModels, type CatalogModels } from './db/models';
import { ProductRepository } from './db/product.repository';
import { ShopRepository, V1ProductRepository } from './db/shop.repository';
import { buildCategories, type Category } from './domain/categories';
import { ProductRules } from './domain/products';

/** Every part of the catalog above its database, built at once. */
export interface CatalogParts {
  models: CatalogModels;
  categories: Category[];
  products: ProductService;
  shops: ShopService;
}

export interface CatalogService extends RunOptions {
  parts: CatalogParts;
}

/** The parts, on the models of the process's mongoose connection (connected by the runtime). */
export function catalogParts(config: Readonly<CatalogConfig>): CatalogParts {
  const models = catalogModels(mongoose.connection);
  const categories = buildCategories(config.REF_PREFIX);
  return {
    models,
    categories,
    products: new ProductService(new ProductRepository(models), new ProductRules(categories), config.REF_PREFIX),
    shops: new ShopService(new ShopRepository(models), new V1ProductRepository(models)),
  };
}

/** How the catalog is put together, eagerly (main.ts and the component tests). */
export function compose(config: Readonly<CatalogConfig>, log: Logger): CatalogService {
  const parts = catalogParts(config);
  return {
    name: 'catalog',
    config,
    log,
    models: allModels(parts.models),
    parts,
    createApp: (runtime) => createApp({ config, runtime, parts }),
  };
}
