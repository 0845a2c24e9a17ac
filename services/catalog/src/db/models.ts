import { Schema, type Connection, type Model } from 'mongoose';
import { pendingEventsField, tombstoneModel, type Tombstone } from '@mkt/kit/bus';
import type { Product, Shop, V1Product } from '../domain/records';

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
productSchema.index({ isDraft: 1, visibility: 1, createdAt: -1 });

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
