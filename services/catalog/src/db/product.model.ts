import mongoose, { Schema } from 'mongoose';
import type { Visibility } from '@mkt/contracts';

export interface ProductProperty {
  propertyId: string;
  value: string | number | boolean;
  propertyNameSnapshot: string;
}

/** Products and drafts share one collection (both are SELL-PROD); drafts have isDraft. */
export interface ProductDoc {
  _id: string;
  sellerId: string;
  isDraft: boolean;
  categoryId: string;
  name: string | null;
  descriptionHtml: string | null;
  sellingPriceMinor: number | null;
  comparePriceMinor: number | null;
  stock: number | null;
  discountCode: string | null;
  discountPercentage: number;
  shippingHandler: string | null;
  deliveryCostMinor: number;
  properties: ProductProperty[];
  visibility: Visibility;
  metaData: { form: string } | null;
  createdAt: Date;
  updatedAt: Date;
}

const productSchema = new Schema<ProductDoc>(
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
  },
  { timestamps: true, versionKey: false },
);
productSchema.index({ isDraft: 1, visibility: 1, createdAt: -1 });

export const Product = mongoose.model<ProductDoc>('Product', productSchema, 'seller_products');
