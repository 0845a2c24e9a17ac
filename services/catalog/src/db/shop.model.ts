import mongoose, { Schema } from 'mongoose';

export interface ShopDoc {
  _id: string;
  ownerId: string;
  name: string;
  slug: string;
  country: string;
  category: string;
  createdAt: Date;
  updatedAt: Date;
}

const shopSchema = new Schema<ShopDoc>(
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

export const Shop = mongoose.model<ShopDoc>('Shop', shopSchema, 'shops');

/** The `/v1/products` group: integer minor-unit prices, a SKU unique per owner. */
export interface V1ProductDoc {
  _id: string;
  ownerId: string;
  title: string;
  priceMinor: number;
  currency: string;
  sku: string;
  inventory: number;
  createdAt: Date;
  updatedAt: Date;
}

const v1ProductSchema = new Schema<V1ProductDoc>(
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

export const V1Product = mongoose.model<V1ProductDoc>('V1Product', v1ProductSchema, 'v1_products');
