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
import { authenticate, authenticateOptional, currentUser, serviceRouter, withInput } from '@mkt/kit';
import type { Category } from '../domain/categories';
import type { ProductService } from '../application/products';
import { toCreatedProduct, toListItem, toProductView } from './views';

/** `/physical-products`: categories and seller products (reads public, writes need a token). */
export function productsRouter(products: ProductService, categories: Category[], publicKey: string): Router {
  const router = serviceRouter();
  const auth = authenticate(publicKey);
  const base = '/seller-products';

  router.get('/categories', (_req, res) => {
    res.json(ok(categories, 'Categories retrieved'));
  });

  router.post(
    `${base}{/}`,
    auth,
    withInput({ body: CreateProductBody }, async (input, req, res) => {
      res.json(ok(toCreatedProduct(await products.create(currentUser(req), input.body)), 'Product created'));
    }),
  );
  router.get(
    `${base}{/}`,
    authenticateOptional(publicKey),
    withInput({ query: ProductListQuery }, async (input, _req, res) => {
      const { items, pagination } = await products.list(input.query);
      res.json(ok(items.map(toListItem), undefined, pagination));
    }),
  );
  router.get(
    `${base}/my`,
    auth,
    withInput({ query: MyProductsQuery }, async (input, req, res) => {
      const { items, pagination } = await products.mine(currentUser(req), input.query);
      res.json(ok(items.map(toProductView), undefined, pagination));
    }),
  );
  router.post(
    `${base}/draft`,
    auth,
    withInput({ body: DraftBody }, async (input, req, res) => {
      res.json(ok(toProductView(await products.createDraft(currentUser(req), input.body)), 'Draft saved'));
    }),
  );
  router.patch(
    `${base}/draft/:referenceId`,
    auth,
    withInput({ params: ProductRefParams, body: UpdateDraftBody }, async (input, req, res) => {
      const draft = await products.updateDraft(currentUser(req), input.params.referenceId, input.body);
      res.json(ok(toProductView(draft), 'Draft saved'));
    }),
  );
  router.get(
    `${base}/:referenceId`,
    authenticateOptional(publicKey),
    withInput({ params: ProductRefParams }, async (input, req, res) => {
      res.json(ok(toProductView(await products.detail(req.user, input.params.referenceId))));
    }),
  );
  router.patch(
    `${base}/:referenceId`,
    auth,
    withInput({ params: ProductRefParams, body: UpdateProductBody }, async (input, req, res) => {
      const product = await products.update(currentUser(req), input.params.referenceId, input.body, req.body);
      res.json(ok(toProductView(product), 'Product updated'));
    }),
  );
  router.patch(
    `${base}/:referenceId/visibility`,
    auth,
    withInput({ params: ProductRefParams, body: VisibilityBody }, async (input, req, res) => {
      const product = await products.setVisibility(currentUser(req), input.params.referenceId, input.body.visibility);
      res.json(ok(toProductView(product), 'Visibility updated'));
    }),
  );
  router.delete(
    `${base}/:referenceId`,
    auth,
    withInput({ params: ProductRefParams }, async (input, req, res) => {
      await products.remove(currentUser(req), input.params.referenceId);
      res.json({ success: true, message: 'Product deleted' });
    }),
  );
  // Every other path here needs a token, then is a 404.
  router.use(auth);
  return router;
}
