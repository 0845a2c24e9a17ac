import { minorToMajor } from '@mkt/contracts';
import type { ProductDoc } from '../db/product.model';

const major = (minor: number | null) => (minor === null ? null : minorToMajor(minor));

/** The whole product (or draft) as its owner and the detail endpoint show it. */
export function toProductView(product: ProductDoc) {
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
export function toListItem(product: ProductDoc) {
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
