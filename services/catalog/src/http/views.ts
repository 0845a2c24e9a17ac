import {
  minorToMajor,
  type DraftResponse,
  type ProductCreatedResponse,
  type ProductListItemResponse,
  type ProductOrDraftResponse,
  type ProductResponse,
  type ShippingHandler,
  type ShopResponse,
  type V1ProductResponse,
} from '@mkt/contracts/catalog';
import type { z } from 'zod';
import type { Product, Shop, V1Product } from '../domain/records';

/** Each view is typed by its response schema: a field the document does not describe, or one it misses, does not compile. */
type View<S extends z.ZodType> = z.input<S>;

const major = (minor: number | null) => (minor === null ? null : minorToMajor(minor));

/** A field every published product has (the product rules require it on create and on publish); a draft's fields are not read here. */
function published<T>(value: T | null, field: string): T {
  if (value === null) throw new Error(`A published product always has its ${field}`);
  return value;
}

/** The whole product (or draft) as its owner and the detail endpoint show it. */
export function toProductView(product: Product): View<typeof ProductOrDraftResponse> {
  if (product.isDraft) return toDraftView(product);
  const view: View<typeof ProductResponse> = {
    id: product._id,
    isDraft: false,
    name: published(product.name, 'name'),
    description: published(product.descriptionHtml, 'description'),
    sellingPrice: published(major(product.sellingPriceMinor), 'sellingPrice'),
    comparePrice: major(product.comparePriceMinor),
    stock: published(product.stock, 'stock'),
    discountCode: product.discountCode,
    discountPercentage: product.discountPercentage,
    shippingHandler: published(product.shippingHandler, 'shippingHandler') as z.output<typeof ShippingHandler>,
    deliveryCost: minorToMajor(product.deliveryCostMinor),
    categoryId: product.categoryId,
    properties: product.properties,
    visibility: product.visibility,
    sellerId: product.sellerId,
    createdAt: product.createdAt.toISOString(),
    updatedAt: product.updatedAt.toISOString(),
  };
  return view;
}

/** A draft: its form as the seller saved it. */
export function toDraftView(product: Product): View<typeof DraftResponse> {
  return {
    id: product._id,
    isDraft: true,
    categoryId: product.categoryId,
    metaData: published(product.metaData, 'metaData'),
    visibility: product.visibility,
    sellerId: product.sellerId,
    createdAt: product.createdAt.toISOString(),
    updatedAt: product.updatedAt.toISOString(),
  };
}

/** A row of the public listing. */
export function toListItem(product: Product): View<typeof ProductListItemResponse> {
  return {
    id: product._id,
    name: published(product.name, 'name'),
    sellingPrice: published(major(product.sellingPriceMinor), 'sellingPrice'),
    comparePrice: major(product.comparePriceMinor),
    discountPercentage: product.discountPercentage,
    stock: published(product.stock, 'stock'),
    visibility: product.visibility,
    categoryId: product.categoryId,
    createdAt: product.createdAt.toISOString(),
  };
}

/** What a create answers. */
export function toCreatedProduct(product: Product): View<typeof ProductCreatedResponse> {
  const { id, name, sellingPrice, stock, createdAt } = toListItem(product);
  return { id, name, sellingPrice, stock, createdAt };
}

export function toShopView(shop: Shop): View<typeof ShopResponse> {
  return {
    id: shop._id,
    name: shop.name,
    slug: shop.slug,
    country: shop.country,
    category: shop.category,
    ownerId: shop.ownerId,
    createdAt: shop.createdAt.toISOString(),
  };
}

export function toV1ProductView(product: V1Product): View<typeof V1ProductResponse> {
  return {
    id: product._id,
    title: product.title,
    price: product.priceMinor,
    currency: product.currency,
    sku: product.sku,
    inventory: product.inventory,
    ownerId: product.ownerId,
    createdAt: product.createdAt.toISOString(),
  };
}
