import type { PageQuery } from '@mkt/contracts/catalog';
import { findPage, type Page } from '@mkt/kit/db';
import { isDuplicateKey } from '@mkt/kit/domain';
import type { NewShop, NewV1Product } from '../domain/shops';
import type { Shop, V1Product } from '../domain/records';
import type { CatalogModels } from './models';

/** A create that a unique index refused (another create with the same key won). */
export const DUPLICATE = Symbol('duplicate');

async function insertUnique<T>(create: () => Promise<{ toObject(): unknown }>): Promise<T | typeof DUPLICATE> {
  try {
    return (await create()).toObject() as T;
  } catch (err) {
    if (isDuplicateKey(err)) return DUPLICATE;
    throw err;
  }
}

/** Every query of `shops` (the slug is a unique index). */
export class ShopRepository {
  constructor(private readonly models: Pick<CatalogModels, 'shops'>) {}

  insert(shop: NewShop): Promise<Shop | typeof DUPLICATE> {
    return insertUnique<Shop>(() => this.models.shops.create(shop));
  }

  async get(id: string): Promise<Shop | null> {
    return this.models.shops.findById(id).lean<Shop>();
  }
}

/** Every query of `v1_products` (owner + SKU is a unique index). */
export class V1ProductRepository {
  constructor(private readonly models: Pick<CatalogModels, 'v1Products'>) {}

  insert(product: NewV1Product): Promise<V1Product | typeof DUPLICATE> {
    return insertUnique<V1Product>(() => this.models.v1Products.create(product));
  }

  async get(id: string): Promise<V1Product | null> {
    return this.models.v1Products.findById(id).lean<V1Product>();
  }

  /** Newest first. */
  async list(query: PageQuery): Promise<Page<V1Product>> {
    return findPage<V1Product>(this.models.v1Products, {}, query, { createdAt: -1 });
  }
}
