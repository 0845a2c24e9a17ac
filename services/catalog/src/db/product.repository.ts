import { escapeRegex, type PageQuery, type ProductListQuery } from '@mkt/contracts/catalog';
import { eventsWritten } from '@mkt/kit/bus';
import { findPage, type Page } from '@mkt/kit/db';
import type { FilterQuery, UpdateQuery } from 'mongoose';
import type { NewProduct, ProductWrite } from '../domain/products';
import type { Product } from '../domain/records';
import { PUBLIC_PRODUCTS, PUBLIC_SORTS, SELLER_INDEX, SELLER_SORT, type CatalogModels } from './models';

/** Every query of `seller_products` (products and drafts). */
export class ProductRepository {
  constructor(private readonly models: Pick<CatalogModels, 'products'>) {}

  async insert(product: NewProduct): Promise<Product> {
    return (await this.models.products.create(product)).toObject();
  }

  async get(id: string): Promise<Product | null> {
    return this.models.products.findById(id).lean<Product>();
  }

  /**
   * The public listing: published, Public products only (`isPublic`), searched by escaped text.
   * Served by the public partial indexes (`PUBLIC_INDEXES`), chosen by the server: no one of them
   * serves every filter and order, so none is hinted. The text search is checked on each product
   * walked (an unanchored pattern has no index bounds).
   */
  async listPublic(query: ProductListQuery): Promise<Page<Product>> {
    const filter: Record<string, unknown> = { ...PUBLIC_PRODUCTS };
    if (query.categoryId) filter.categoryId = query.categoryId;
    if (query.q) {
      const pattern = new RegExp(escapeRegex(query.q), 'i');
      filter.$or = [{ name: pattern }, { descriptionHtml: pattern }];
    }
    const price: Record<string, number> = {};
    if (query.minPriceMinor !== undefined) price.$gte = query.minPriceMinor;
    if (query.maxPriceMinor !== undefined) price.$lte = query.maxPriceMinor;
    if (Object.keys(price).length > 0) filter.sellingPriceMinor = price;
    return findPage<Product>(this.models.products, filter, query, PUBLIC_SORTS[query.sort]);
  }

  /**
   * A seller's products and drafts, newest first: the page walked in order through the index of
   * that order (`SELLER_INDEX`, hinted: it serves this read whatever the seller or page; the
   * process starts only on a database whose migrations ran, 0004-listing-indexes among them).
   */
  listBySeller(sellerId: string, query: PageQuery): Promise<Page<Product>> {
    return findPage<Product>(this.models.products, { sellerId }, query, SELLER_SORT, SELLER_INDEX);
  }

  /**
   * Carries a change out in one conditional write: the record as the decision expects it, its
   * fields set and its audit entry pushed into the outbox together. The changed product, or null
   * when it went away or no longer matches meanwhile. The entry is published right after the
   * write (`eventsWritten`).
   */
  async write(id: string, write: ProductWrite): Promise<Product | null> {
    const filter: FilterQuery<Product> = { _id: id, ...write.expect };
    const update: UpdateQuery<Product> = { $set: write.set, ...(write.event ? { $push: { pendingEvents: write.event } } : {}) };
    const saved = await this.models.products.findOneAndUpdate(filter, update, { new: true }).lean<Product>();
    if (saved && write.event) eventsWritten(this.models.products, saved);
    return saved;
  }
}
