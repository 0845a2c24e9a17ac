import type { Router } from 'express';
import { CreateShopBody, CreateV1ProductBody, ShopParams, V1ProductListQuery, V1ProductParams, ok } from '@mkt/contracts';
import { currentUser, serviceRouter, withInput } from '@mkt/kit';
import { createShop, createV1Product, findShop, findV1Product, listV1Products, toShopView, toV1ProductView } from '../domain/shops';

export function shopsRouter(): Router {
  const router = serviceRouter();
  router.post(
    '/',
    withInput({ body: CreateShopBody }, async (input, req, res) => {
      res.json(ok(toShopView(await createShop(currentUser(req), input.body)), 'Shop created'));
    }),
  );
  router.get(
    '/:shopId',
    withInput({ params: ShopParams }, async (input, _req, res) => {
      res.json(ok(toShopView(await findShop(input.params.shopId))));
    }),
  );
  return router;
}

export function v1ProductsRouter(): Router {
  const router = serviceRouter();
  router.post(
    '/',
    withInput({ body: CreateV1ProductBody }, async (input, req, res) => {
      res.json(ok(toV1ProductView(await createV1Product(currentUser(req), input.body)), 'Product created'));
    }),
  );
  router.get(
    '/',
    withInput({ query: V1ProductListQuery }, async (input, _req, res) => {
      const { items, pagination } = await listV1Products(input.query);
      res.json(ok(items.map(toV1ProductView), undefined, pagination));
    }),
  );
  router.get(
    '/:productId',
    withInput({ params: V1ProductParams }, async (input, _req, res) => {
      res.json(ok(toV1ProductView(await findV1Product(input.params.productId))));
    }),
  );
  return router;
}
