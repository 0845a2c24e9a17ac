import { Schema, type Connection, type Model } from 'mongoose';
import { pendingEventsField, tombstoneModel, type Tombstone } from '@mkt/kit/bus';
import type { Product, Shop, V1Product } from '../domain/records';

/**
 * What the public listing shows: published, Public products. Every one of its reads filters on
 * exactly this, so the partial indexes below (which hold these products only) serve each of them.
 */
export const PUBLIC_PRODUCTS = { isDraft: false, visibility: 'Public' } as const;

/**
 * The public listing's orders. Each ends in `_id`: products created in the same millisecond (or
 * at one price) have one order, so a page boundary never repeats or skips one. The public
 * indexes have these keys in this order (after `categoryId` in the category's).
 */
export const PUBLIC_SORTS = {
  newest: { createdAt: -1, _id: -1 },
  price_asc: { sellingPriceMinor: 1, createdAt: -1, _id: -1 },
  price_desc: { sellingPriceMinor: -1, createdAt: -1, _id: -1 },
} as const;

/**
 * The names of the public listing's partial indexes, by category or not and by order
 * (0004-listing-indexes builds them on a database made before).
 */
export const PUBLIC_INDEXES = {
  newest: 'public_newest',
  price_asc: 'public_price_asc',
  price_desc: 'public_price_desc',
  category_newest: 'public_category_newest',
  category_price_asc: 'public_category_price_asc',
  category_price_desc: 'public_category_price_desc',
} as const;

/** A seller's products and drafts, newest first (`_id` between equals, as the public listing). */
export const SELLER_SORT = { createdAt: -1, _id: -1 } as const;
/** The name of the index of a seller's products in that order (their listing hints it; 0004-listing-indexes builds it). */
export const SELLER_INDEX = 'seller_newest';

/** Products and drafts share one collection (both are SELL-PROD); drafts have isDraft. */
const productSchema = new Schema<Product>(
  {
    _id: { type: String, required: true },
    sellerId: { type: String, required: true, index: true },
    isDraft: { type: Boolean, required: true, default: false },
    categoryId: { type: String, required: true },
    name: { type: String, default: null },
    descriptionHtml: { type: String, default: null },
    sellingPriceMinor: { type: Number, default: null },
    comparePriceMinor: { type: Number, default: null },
    stock: { type: Number, default: null },
    discountCode: { type: String, default: null },
    discountPercentage: { type: Number, default: 0 },
    shippingHandler: { type: String, default: null },
    deliveryCostMinor: { type: Number, default: 0 },
    properties: { type: [{ _id: false, propertyId: String, value: Schema.Types.Mixed, propertyNameSnapshot: String }], default: [] },
    visibility: { type: String, required: true, default: 'Public' },
    metaData: { type: new Schema({ form: { type: String, required: true } }, { _id: false }), default: null },
    /** The outbox: an admin's change's audit entry, until it is published. */
    pendingEvents: pendingEventsField,
  },
  { timestamps: true, versionKey: false },
);
// What the previous release's public listing reads by; this release reads by the partial indexes
// below (kept for a rolling update: a process of the previous release may still serve beside it).
productSchema.index({ isDraft: 1, visibility: 1, createdAt: -1 });
/**
 * The public listing in each of its orders, the public products only: a read walks its page in
 * order and stops (the page and the count its filter asks for), instead of sorting every public
 * product in memory (the price orders) or walking them all for one category. A price range is
 * bounds on the price orders' first key; under `newest` it is checked on each product walked.
 */
const publicOnly = { partialFilterExpression: PUBLIC_PRODUCTS };
productSchema.index(PUBLIC_SORTS.newest, { ...publicOnly, name: PUBLIC_INDEXES.newest });
productSchema.index(PUBLIC_SORTS.price_asc, { ...publicOnly, name: PUBLIC_INDEXES.price_asc });
productSchema.index(PUBLIC_SORTS.price_desc, { ...publicOnly, name: PUBLIC_INDEXES.price_desc });
productSchema.index({ categoryId: 1, ...PUBLIC_SORTS.newest }, { ...publicOnly, name: PUBLIC_INDEXES.category_newest });
productSchema.index({ categoryId: 1, ...PUBLIC_SORTS.price_asc }, { ...publicOnly, name: PUBLIC_INDEXES.category_price_asc });
productSchema.index({ categoryId: 1, ...PUBLIC_SORTS.price_desc }, { ...publicOnly, name: PUBLIC_INDEXES.category_price_desc });
/** A seller's products and drafts in their listing's order: its page read walks it and stops. */
productSchema.index({ sellerId: 1, ...SELLER_SORT }, { name: SELLER_INDEX });

const shopSchema = new Schema<Shop>(
  {
    _id: { type: String, required: true },
    ownerId: { type: String, required: true, index: true },
    name: { type: String, required: true },
    slug: { type: String, required: true, unique: true },
    country: { type: String, required: true },
    category: { type: String, required: true },
  },
  { timestamps: true, versionKey: false },
);

const v1ProductSchema = new Schema<V1Product>(
  {
    _id: { type: String, required: true },
    ownerId: { type: String, required: true },
    title: { type: String, required: true },
    priceMinor: { type: Number, required: true },
    currency: { type: String, required: true },
    sku: { type: String, required: true },
    inventory: { type: Number, required: true },
  },
  { timestamps: true, versionKey: false },
);
v1ProductSchema.index({ ownerId: 1, sku: 1 }, { unique: true });
v1ProductSchema.index({ createdAt: -1 });

export interface CatalogModels {
  products: Model<Product>;
  shops: Model<Shop>;
  v1Products: Model<V1Product>;
  /** The products' deletes (`RecordDeletes`): an admin's delete's audit entry, until it is published. */
  deletions: Model<Tombstone>;
}

/** The catalog's models, bound to the connection `db` (nothing global to the process). */
export function catalogModels(db: Connection): CatalogModels {
  return {
    products: db.model<Product>('Product', productSchema, 'seller_products'),
    shops: db.model<Shop>('Shop', shopSchema, 'shops'),
    v1Products: db.model<V1Product>('V1Product', v1ProductSchema, 'v1_products'),
    deletions: tombstoneModel(db),
  };
}

/** Every model, for building their indexes at start. */
export const allModels = (models: CatalogModels) => [models.products, models.shops, models.v1Products, models.deletions];
