import type { Router } from 'express';
import { CreateShopBody, CreateV1ProductBody, ShopParams, V1ProductListQuery, V1ProductParams, ok } from '@mkt/contracts';
import { currentUser, serviceRouter, validate } from '@mkt/kit';
import { createShop, createV1Product, findShop, findV1Product, listV1Products, toShopView, toV1ProductView } from '../domain/shops';

export function shopsRouter(): Router {
  const router = serviceRouter();
  router.post('/', validate({ body: CreateShopBody }), async (req, res) => {
    res.json(ok(toShopView(await createShop(currentUser(req), res.locals.body)), 'Shop created'));
  });
  router.get('/:shopId', validate({ params: ShopParams }), async (_req, res) => {
    res.json(ok(toShopView(await findShop(res.locals.params.shopId))));
  });
  return router;
}

export function v1ProductsRouter(): Router {
  const router = serviceRouter();
  router.post('/', validate({ body: CreateV1ProductBody }), async (req, res) => {
    res.json(ok(toV1ProductView(await createV1Product(currentUser(req), res.locals.body)), 'Product created'));
  });
  router.get('/', validate({ query: V1ProductListQuery }), async (_req, res) => {
    const { items, pagination } = await listV1Products(res.locals.query);
    res.json(ok(items.map(toV1ProductView), undefined, pagination));
  });
  router.get('/:productId', validate({ params: V1ProductParams }), async (_req, res) => {
    res.json(ok(toV1ProductView(await findV1Product(res.locals.params.productId))));
  });
  return router;
}
