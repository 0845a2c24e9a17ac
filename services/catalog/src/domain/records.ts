import type { IntegrationEvent, Visibility } from '@mkt/contracts/catalog';

/**
 * The catalog's stored records as the domain and the repositories read them (what `db/models.ts`
 * stores). Plain types: the schemas are typed by them, the decisions take them in.
 */

export interface ProductProperty {
  propertyId: string;
  value: string | number | boolean;
  propertyNameSnapshot: string;
}

/** A seller product or draft as stored (both are SELL-PROD; drafts have isDraft). */
export interface Product {
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
  /** The outbox (an admin's change's audit entry); absent on records never changed by an admin. */
  pendingEvents?: IntegrationEvent[];
  createdAt: Date;
  updatedAt: Date;
}

export interface Shop {
  _id: string;
  ownerId: string;
  name: string;
  slug: string;
  country: string;
  category: string;
  createdAt: Date;
  updatedAt: Date;
}

/** The `/v1/products` group: integer minor-unit prices, a SKU unique per owner. */
export interface V1Product {
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
