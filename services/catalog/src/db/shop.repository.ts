import { pageOffset, pagination, type PageQuery } from '@mkt/contracts/catalog';
import type { Page } from '@mkt/kit/db';
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

  /**
   * Newest first, every `/v1` product. The total is the collection's own count of its documents
   * (`estimatedDocumentCount`: its metadata, no scan) rather than a count of every document on
   * each page; it can be off after an unclean shutdown of the server until it is validated, and a
   * sharded collection's counts orphaned documents — a page's total, not a figure anything else
   * relies on.
   */
  async list(query: PageQuery): Promise<Page<V1Product>> {
    const { v1Products } = this.models;
    const [items, total] = await Promise.all([
      v1Products.find({}).sort({ createdAt: -1 }).skip(pageOffset(query)).limit(query.limit).lean<V1Product[]>(),
      v1Products.estimatedDocumentCount(),
    ]);
    return { items, pagination: pagination(query, total) };
  }
}
