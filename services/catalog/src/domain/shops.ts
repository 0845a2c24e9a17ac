import { ErrorCode, type CreateShopBody, type CreateV1ProductBody } from '@mkt/contracts';
import { AppError, Conflict, Forbidden } from '@mkt/kit/domain';
import type { Actor } from './actor';

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

export type NewShop = Omit<Shop, 'createdAt' | 'updatedAt'>;
export type NewV1Product = Omit<V1Product, 'createdAt' | 'updatedAt'>;

/** Shops and products are the sellers' (and an admin's); a buyer's create is 403. */
function assertSeller(user: Actor, what: string): void {
  if (user.role !== 'seller' && user.role !== 'admin') throw new Forbidden(`Only sellers create ${what}`);
}

/** A shop of its caller (a seller or an admin), under the id `id`. */
export function decideShop(user: Actor, body: CreateShopBody, id: string): NewShop {
  assertSeller(user, 'shops');
  return { _id: id, ownerId: user.id, ...body };
}

/** A `/v1` product of its caller (a seller or an admin): the price is kept in minor units. */
export function decideV1Product(user: Actor, body: CreateV1ProductBody, id: string): NewV1Product {
  assertSeller(user, 'products');
  const { price, ...rest } = body;
  return { _id: id, ownerId: user.id, priceMinor: price, ...rest };
}

/**
 * Unique keys decide races (the database's unique index): of two creates with one slug, or one
 * owner's SKU, one wins; the other gets these.
 */
export const slugTaken = (): AppError => new Conflict('A shop with this slug exists already');
export const skuTaken = (): AppError =>
  new AppError(409, ErrorCode.conflict, 'You have a product with this SKU already', [
    { path: 'sku', code: ErrorCode.conflict, message: 'SKU taken' },
  ]);
