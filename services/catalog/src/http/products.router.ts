import type { Router } from 'express';
import {
  CreateProductBody,
  DraftBody,
  MyProductsQuery,
  ProductListQuery,
  ProductRefParams,
  UpdateDraftBody,
  UpdateProductBody,
  VisibilityBody,
  ok,
} from '@mkt/contracts';
import { authenticate, authenticateOptional, currentUser, serviceRouter, validate } from '@mkt/kit';
import type { Category } from '../domain/categories';
import { toListItem, toProductView } from '../domain/product-view';
import type { Products } from '../domain/products';

/** `/physical-products`: categories and seller products (reads public, writes need a token). */
export function productsRouter(products: Products, categories: Category[], publicKey: string): Router {
  const router = serviceRouter();
  const auth = authenticate(publicKey);
  const base = '/seller-products';

  router.get('/categories', (_req, res) => {
    res.json(ok(categories, 'Categories retrieved'));
  });

  router.post(`${base}{/}`, auth, validate({ body: CreateProductBody }), async (req, res) => {
    const product = await products.create(currentUser(req), res.locals.body);
    const { id, name, sellingPrice, stock, createdAt } = toListItem(product);
    res.json(ok({ id, name, sellingPrice, stock, createdAt }, 'Product created'));
  });
  router.get(`${base}{/}`, authenticateOptional(publicKey), validate({ query: ProductListQuery }), async (_req, res) => {
    const { items, pagination } = await products.list(res.locals.query);
    res.json(ok(items.map(toListItem), undefined, pagination));
  });
  router.get(`${base}/my`, auth, validate({ query: MyProductsQuery }), async (req, res) => {
    const { items, pagination } = await products.mine(currentUser(req), res.locals.query);
    res.json(ok(items.map(toProductView), undefined, pagination));
  });
  router.post(`${base}/draft`, auth, validate({ body: DraftBody }), async (req, res) => {
    res.json(ok(toProductView(await products.createDraft(currentUser(req), res.locals.body)), 'Draft saved'));
  });
  router.patch(`${base}/draft/:referenceId`, auth, validate({ params: ProductRefParams, body: UpdateDraftBody }), async (req, res) => {
    const draft = await products.updateDraft(currentUser(req), res.locals.params.referenceId, res.locals.body);
    res.json(ok(toProductView(draft), 'Draft saved'));
  });
  router.get(`${base}/:referenceId`, authenticateOptional(publicKey), validate({ params: ProductRefParams }), async (req, res) => {
    res.json(ok(toProductView(await products.detail(req.user, res.locals.params.referenceId))));
  });
  router.patch(`${base}/:referenceId`, auth, validate({ params: ProductRefParams, body: UpdateProductBody }), async (req, res) => {
    const product = await products.update(currentUser(req), res.locals.params.referenceId, res.locals.body, req.body);
    res.json(ok(toProductView(product), 'Product updated'));
  });
  router.patch(`${base}/:referenceId/visibility`, auth, validate({ params: ProductRefParams, body: VisibilityBody }), async (req, res) => {
    const product = await products.setVisibility(currentUser(req), res.locals.params.referenceId, res.locals.body.visibility);
    res.json(ok(toProductView(product), 'Visibility updated'));
  });
  router.delete(`${base}/:referenceId`, auth, validate({ params: ProductRefParams }), async (req, res) => {
    await products.remove(currentUser(req), res.locals.params.referenceId);
    res.json({ success: true, message: 'Product deleted' });
  });
  // Every other path here needs a token, then is a 404.
  router.use(auth);
  return router;
}
