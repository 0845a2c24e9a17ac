import { createDatabase, type Database } from '@mkt/kit/db';
import { createRuntime, periodicJob, type ServiceDefinition } from '@mkt/kit/runtime';
import { RecordDeletes, type OutboxRelay } from '@mkt/kit/bus';
import type { Logger } from '@mkt/kit/logger';
import { createApp } from './app';
import { Products } from './application/products.use-cases';
import { Shops } from './application/shops.use-cases';
import type { CatalogConfig } from './config';
import { catalogMigrations } from './migrations';
import { allModels, catalogModels, type CatalogModels } from './db/models';
import { ProductRepository } from './db/product.repository';
import { ShopRepository, V1ProductRepository } from './db/shop.repository';
import type { CatalogHttpParts } from './http/catalog.handlers';
import { buildCategories } from './domain/categories';
import { ProductRules } from './domain/products';

/** Every part of the catalog above its database, built at once. */
export interface CatalogParts extends CatalogHttpParts {
  models: CatalogModels;
  /** Every delete of a product goes through here (an admin's records its audit entry). */
  deletes: RecordDeletes;
}

/**
 * The models (bound to `db`, unless given already bound), repositories and application services;
 * `outbox` publishes a delete's audit entry right after it (a write's own, its repository does).
 */
export function catalogParts(
  config: Readonly<CatalogConfig>,
  db: Database,
  options: { models?: CatalogModels; outbox?: Pick<OutboxRelay, 'flush'> } = {},
): CatalogParts {
  const models = options.models ?? catalogModels(db);
  const categories = buildCategories(config.REF_PREFIX);
  const outbox = options.outbox ?? { flush: async () => undefined };
  const deletes = new RecordDeletes(models.products, models.deletions, outbox);
  return {
    models,
    categories,
    deletes,
    products: new Products(new ProductRepository(models), new ProductRules(categories), config.REF_PREFIX, deletes),
    shops: new Shops(new ShopRepository(models), new V1ProductRepository(models)),
  };
}

/**
 * How the catalog is put together, every part at once and nothing connected (main.ts starts
 * `definition`; the component tests too, and read `parts`).
 */
export function catalogService(config: Readonly<CatalogConfig>, log: Logger): { definition: ServiceDefinition; parts: CatalogParts } {
  const db = createDatabase();
  const models = catalogModels(db);
  const runtime = createRuntime({
    name: 'catalog',
    config,
    log,
    db,
    outboxSources: [
      { name: 'products', model: models.products },
      { name: 'deletions', model: models.deletions },
    ],
  });
  const parts = catalogParts(config, db, { models, outbox: runtime.outbox });
  const app = createApp({ config, runtime, parts });
  // A delete's claim its request left (a crash) is finished; drained tombstones are forgotten.
  const jobs = [periodicJob('deletions-sweep', 10_000, () => parts.deletes.sweep())];
  return { definition: { runtime, config, models: allModels(parts.models), migrations: catalogMigrations, app, jobs }, parts };
}
