import { randomUUID } from 'node:crypto';
import { ErrorCode, type CreateShopBody, type CreateV1ProductBody, type PageQuery } from '@mkt/contracts';
import { AppError, Conflict, Forbidden, isDuplicateKey, NotFound, type AuthenticatedUser, findPage } from '@mkt/kit';
import { Shop, V1Product, type ShopDoc, type V1ProductDoc } from '../db/shop.model';

export function toShopView(shop: ShopDoc) {
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

export function toV1ProductView(product: V1ProductDoc) {
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

/** Unique keys decide races: of two creates with one slug (or one owner's SKU), one wins. */
async function createUnique<T>(create: () => Promise<T>, conflict: () => AppError): Promise<T> {
  try {
    return await create();
  } catch (err) {
    if (isDuplicateKey(err)) throw conflict();
    throw err;
  }
}

/** Shops and products are the sellers' (and an admin's); a buyer's create is 403. */
function assertSeller(user: AuthenticatedUser, what: string): void {
  if (user.role !== 'seller' && user.role !== 'admin') throw new Forbidden(`Only sellers create ${what}`);
}

export async function createShop(user: AuthenticatedUser, body: CreateShopBody): Promise<ShopDoc> {
  assertSeller(user, 'shops');
  const shop = await createUnique(
    () => Shop.create({ _id: randomUUID(), ownerId: user.id, ...body }),
    () => new Conflict('A shop with this slug exists already'),
  );
  return shop.toObject();
}

export async function findShop(shopId: string): Promise<ShopDoc> {
  const shop = await Shop.findById(shopId).lean<ShopDoc>();
  if (!shop) throw new NotFound('Shop');
  return shop;
}

export async function createV1Product(user: AuthenticatedUser, body: CreateV1ProductBody): Promise<V1ProductDoc> {
  assertSeller(user, 'products');
  const { price, ...rest } = body;
  const product = await createUnique(
    () => V1Product.create({ _id: randomUUID(), ownerId: user.id, priceMinor: price, ...rest }),
    () =>
      new AppError(409, ErrorCode.conflict, 'You have a product with this SKU already', [
        { path: 'sku', code: ErrorCode.conflict, message: 'SKU taken' },
      ]),
  );
  return product.toObject();
}

export async function findV1Product(productId: string): Promise<V1ProductDoc> {
  const product = await V1Product.findById(productId).lean<V1ProductDoc>();
  if (!product) throw new NotFound('Product');
  return product;
}

export async function listV1Products(query: PageQuery) {
  return findPage<V1ProductDoc>(V1Product, {}, query, { createdAt: -1 });
}
