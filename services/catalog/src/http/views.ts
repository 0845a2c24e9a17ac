import { minorToMajor } from '@mkt/contracts';
import type { Product } from '../domain/products';
import type { Shop, V1Product } from '../domain/shops';

const major = (minor: number | null) => (minor === null ? null : minorToMajor(minor));

/** The whole product (or draft) as its owner and the detail endpoint show it. */
export function toProductView(product: Product) {
  if (product.isDraft) {
    return {
      id: product._id,
      isDraft: true,
      categoryId: product.categoryId,
      metaData: product.metaData,
      visibility: product.visibility,
      sellerId: product.sellerId,
      createdAt: product.createdAt.toISOString(),
      updatedAt: product.updatedAt.toISOString(),
    };
  }
  return {
    id: product._id,
    isDraft: false,
    name: product.name,
    description: product.descriptionHtml,
    sellingPrice: major(product.sellingPriceMinor),
    comparePrice: major(product.comparePriceMinor),
    stock: product.stock,
    discountCode: product.discountCode,
    discountPercentage: product.discountPercentage,
    shippingHandler: product.shippingHandler,
    deliveryCost: major(product.deliveryCostMinor),
    categoryId: product.categoryId,
    properties: product.properties,
    visibility: product.visibility,
    sellerId: product.sellerId,
    createdAt: product.createdAt.toISOString(),
    updatedAt: product.updatedAt.toISOString(),
  };
}

/** A row of the public listing. */
export function toListItem(product: Product) {
  return {
    id: product._id,
    name: product.name,
    sellingPrice: major(product.sellingPriceMinor),
    comparePrice: major(product.comparePriceMinor),
    discountPercentage: product.discountPercentage,
    stock: product.stock,
    visibility: product.visibility,
    categoryId: product.categoryId,
    createdAt: product.createdAt.toISOString(),
  };
}

/** What a create answers. */
export function toCreatedProduct(product: Product) {
  const { id, name, sellingPrice, stock, createdAt } = toListItem(product);
  return { id, name, sellingPrice, stock, createdAt };
}

export function toShopView(shop: Shop) {
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

export function toV1ProductView(product: V1Product) {
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
