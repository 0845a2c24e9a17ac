import {
  CreateProductBody,
  CreateShopBody,
  CreateV1ProductBody,
  DraftBody,
  MyProductsQuery,
  ProductListQuery,
  ProductRefParams,
  ShopParams,
  UpdateDraftBody,
  UpdateProductBody,
  V1ProductListQuery,
  V1ProductParams,
  VisibilityBody,
  ok,
} from '@mkt/contracts';
import { adminRequestOf, currentUser, handle, type MountOptions } from '@mkt/kit';
import type { CatalogParts } from '../composition';
import { toCreatedProduct, toListItem, toProductView, toShopView, toV1ProductView } from './views';

/** One handler per entry of the catalog in the contracts' endpoint table. */
export function catalogHandlers({
  products,
  shops,
  categories,
}: Pick<CatalogParts, 'products' | 'shops' | 'categories'>): MountOptions['handlers'] {
  return {
    'GET /physical-products/categories': handle({}, (_input, _req, res) => {
      res.json(ok(categories, 'Categories retrieved'));
    }),
    'POST /physical-products/seller-products/': handle({ body: CreateProductBody }, async (input, req, res) => {
      res.json(ok(toCreatedProduct(await products.create(currentUser(req), input.body)), 'Product created'));
    }),
    'GET /physical-products/seller-products/': handle({ query: ProductListQuery }, async (input, _req, res) => {
      const { items, pagination } = await products.list(input.query);
      res.json(ok(items.map(toListItem), undefined, pagination));
    }),
    'GET /physical-products/seller-products/my': handle({ query: MyProductsQuery }, async (input, req, res) => {
      const { items, pagination } = await products.mine(currentUser(req), input.query);
      res.json(ok(items.map(toProductView), undefined, pagination));
    }),
    'POST /physical-products/seller-products/draft': handle({ body: DraftBody }, async (input, req, res) => {
      res.json(ok(toProductView(await products.createDraft(currentUser(req), input.body)), 'Draft saved'));
    }),
    'PATCH /physical-products/seller-products/draft/{referenceId}': handle(
      { params: ProductRefParams, body: UpdateDraftBody },
      async (input, req, res) => {
        const draft = await products.updateDraft(currentUser(req), input.params.referenceId, input.body, adminRequestOf(req));
        res.json(ok(toProductView(draft), 'Draft saved'));
      },
    ),
    'GET /physical-products/seller-products/{referenceId}': handle({ params: ProductRefParams }, async (input, req, res) => {
      res.json(ok(toProductView(await products.detail(req.user, input.params.referenceId))));
    }),
    'PATCH /physical-products/seller-products/{referenceId}': handle(
      { params: ProductRefParams, body: UpdateProductBody },
      async (input, req, res) => {
        // The raw body too: on a draft, the full fields publish it (checked like a create).
        const product = await products.update(currentUser(req), input.params.referenceId, input.body, req.body, adminRequestOf(req));
        res.json(ok(toProductView(product), 'Product updated'));
      },
    ),
    'PATCH /physical-products/seller-products/{referenceId}/visibility': handle(
      { params: ProductRefParams, body: VisibilityBody },
      async (input, req, res) => {
        const product = await products.setVisibility(
          currentUser(req),
          input.params.referenceId,
          input.body.visibility,
          adminRequestOf(req),
        );
        res.json(ok(toProductView(product), 'Visibility updated'));
      },
    ),
    'DELETE /physical-products/seller-products/{referenceId}': handle({ params: ProductRefParams }, async (input, req, res) => {
      await products.remove(currentUser(req), input.params.referenceId, adminRequestOf(req));
      res.json({ success: true, message: 'Product deleted' });
    }),
    'POST /v1/shops': handle({ body: CreateShopBody }, async (input, req, res) => {
      res.json(ok(toShopView(await shops.createShop(currentUser(req), input.body)), 'Shop created'));
    }),
    'GET /v1/shops/{shopId}': handle({ params: ShopParams }, async (input, _req, res) => {
      res.json(ok(toShopView(await shops.findShop(input.params.shopId))));
    }),
    'POST /v1/products': handle({ body: CreateV1ProductBody }, async (input, req, res) => {
      res.json(ok(toV1ProductView(await shops.createProduct(currentUser(req), input.body)), 'Product created'));
    }),
    'GET /v1/products': handle({ query: V1ProductListQuery }, async (input, _req, res) => {
      const { items, pagination } = await shops.listProducts(input.query);
      res.json(ok(items.map(toV1ProductView), undefined, pagination));
    }),
    'GET /v1/products/{productId}': handle({ params: V1ProductParams }, async (input, _req, res) => {
      res.json(ok(toV1ProductView(await shops.findProduct(input.params.productId))));
    }),
  };
}
