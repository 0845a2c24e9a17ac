import { randomUUID } from 'node:crypto';
import type { CreateShopBody, CreateV1ProductBody, PageQuery } from '@mkt/contracts/catalog';
import { foundOr404 } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import type { Page } from '@mkt/kit/db';
import { DUPLICATE, type ShopRepository, type V1ProductRepository } from '../db/shop.repository';
import { SkuTaken, SlugTaken } from '../domain/errors';
import { decideShop, decideV1Product } from '../domain/shops';
import type { Shop, V1Product } from '../domain/records';

/** Shops and the `/v1/products` group. */
export class Shops {
  constructor(
    private readonly shops: ShopRepository,
    private readonly v1Products: V1ProductRepository,
  ) {}

  async createShop(user: AuthenticatedUser, body: CreateShopBody): Promise<Shop> {
    const shop = await this.shops.insert(decideShop(user, body, randomUUID()));
    if (shop === DUPLICATE) throw new SlugTaken();
    return shop;
  }

  async findShop(shopId: string): Promise<Shop> {
    return foundOr404(await this.shops.get(shopId), 'Shop');
  }

  async createProduct(user: AuthenticatedUser, body: CreateV1ProductBody): Promise<V1Product> {
    const product = await this.v1Products.insert(decideV1Product(user, body, randomUUID()));
    if (product === DUPLICATE) throw new SkuTaken();
    return product;
  }

  async findProduct(productId: string): Promise<V1Product> {
    return foundOr404(await this.v1Products.get(productId), 'Product');
  }

  listProducts(query: PageQuery): Promise<Page<V1Product>> {
    return this.v1Products.list(query);
  }
}
