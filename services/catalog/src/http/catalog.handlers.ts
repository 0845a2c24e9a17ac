import { OPERATIONS } from '@mkt/contracts/catalog';
import { adminRequestOf, operationHandlers, type MountedHandlers } from '@mkt/kit/http';
import type { Products } from '../application/products.use-cases';
import type { Shops } from '../application/shops.use-cases';
import type { Category } from '../domain/categories';
import { toCreatedProduct, toDraftView, toListItem, toProductView, toShopView, toV1ProductView } from './views';

/** What the HTTP layer calls: the application services (composition.ts builds them). */
export interface CatalogHttpParts {
  products: Products;
  shops: Shops;
  categories: Category[];
}

/** One handler per operation of the catalog in the contracts' table (its input and answer typed by the entry). */
export function catalogHandlers({ products, shops, categories }: CatalogHttpParts): MountedHandlers {
  return operationHandlers(OPERATIONS, 'catalog', {
    listCategories: () => ({ data: categories, message: 'Categories retrieved' }),
    createProduct: async ({ body }, { user }) => ({
      data: toCreatedProduct(await products.create(user, body)),
      message: 'Product created',
    }),
    listProducts: async ({ query }) => {
      const { items, pagination } = await products.list(query);
      return { data: items.map(toListItem), pagination };
    },
    listMyProducts: async ({ query }, { user }) => {
      const { items, pagination } = await products.mine(user, query);
      return { data: items.map(toProductView), pagination };
    },
    createProductDraft: async ({ body }, { user }) => ({
      data: toDraftView(await products.createDraft(user, body)),
      message: 'Draft saved',
    }),
    updateProductDraft: async ({ params, body }, { req, user }) => {
      const draft = await products.updateDraft(user, params.referenceId, body, adminRequestOf(req));
      return { data: toDraftView(draft), message: 'Draft saved' };
    },
    getProduct: async ({ params }, { user }) => ({ data: toProductView(await products.detail(user, params.referenceId)) }),
    updateProduct: async ({ params, body }, { req, user }) => {
      // The raw body too: on a draft, the full fields publish it (checked like a create).
      const product = await products.update(user, params.referenceId, body, req.body, adminRequestOf(req));
      return { data: toProductView(product), message: 'Product updated' };
    },
    setProductVisibility: async ({ params, body }, { req, user }) => {
      const product = await products.setVisibility(user, params.referenceId, body.visibility, adminRequestOf(req));
      return { data: toProductView(product), message: 'Visibility updated' };
    },
    // Every delete goes through the record deletes (a tombstone first); an admin's of another seller's product is audited.
    deleteProduct: async ({ params }, { req, user }) => {
      await products.remove(user, params.referenceId, adminRequestOf(req));
      return { message: 'Product deleted' };
    },
    createShop: async ({ body }, { user }) => ({ data: toShopView(await shops.createShop(user, body)), message: 'Shop created' }),
    getShop: async ({ params }) => ({ data: toShopView(await shops.findShop(params.shopId)) }),
    createV1Product: async ({ body }, { user }) => ({
      data: toV1ProductView(await shops.createProduct(user, body)),
      message: 'Product created',
    }),
    listV1Products: async ({ query }) => {
      const { items, pagination } = await shops.listProducts(query);
      return { data: items.map(toV1ProductView), pagination };
    },
    getV1Product: async ({ params }) => ({ data: toV1ProductView(await shops.findProduct(params.productId)) }),
  });
}
