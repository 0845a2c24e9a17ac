import type { Router } from 'express';
import { CreateShopBody, CreateV1ProductBody, ShopParams, V1ProductListQuery, V1ProductParams, ok } from '@mkt/contracts';
import { currentUser, serviceRouter, withInput } from '@mkt/kit';
import type { ShopService } from '../application/shops';
import { toShopView, toV1ProductView } from './views';

export function shopsRouter(shops: ShopService): Router {
  const router = serviceRouter();
  router.post(
    '/',
    withInput({ body: CreateShopBody }, async (input, req, res) => {
      res.json(ok(toShopView(await shops.createShop(currentUser(req), input.body)), 'Shop created'));
    }),
  );
  router.get(
    '/:shopId',
    withInput({ params: ShopParams }, async (input, _req, res) => {
      res.json(ok(toShopView(await shops.findShop(input.params.shopId))));
    }),
  );
  return router;
}

export function v1ProductsRouter(shops: ShopService): Router {
  const router = serviceRouter();
  router.post(
    '/',
    withInput({ body: CreateV1ProductBody }, async (input, req, res) => {
      res.json(ok(toV1ProductView(await shops.createProduct(currentUser(req), input.body)), 'Product created'));
    }),
  );
  router.get(
    '/',
    withInput({ query: V1ProductListQuery }, async (input, _req, res) => {
      const { items, pagination } = await shops.listProducts(input.query);
      res.json(ok(items.map(toV1ProductView), undefined, pagination));
    }),
  );
  router.get(
    '/:productId',
    withInput({ params: V1ProductParams }, async (input, _req, res) => {
      res.json(ok(toV1ProductView(await shops.findProduct(input.params.productId))));
    }),
  );
  return router;
}
