import type { CreateShopBody, CreateV1ProductBody } from '@mkt/contracts/catalog';
import { Forbidden } from '@mkt/kit/domain';
import type { Actor } from './actor';
import type { Shop, V1Product } from './records';

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
