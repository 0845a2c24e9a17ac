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
} from '../catalog';
import {
  CategoriesResponse,
  DraftResponse,
  MyProductsResponse,
  ProductCreatedResponse,
  ProductListResponse,
  ProductOrDraftResponse,
  ShopResponse,
  V1ProductListResponse,
  V1ProductResponse,
} from '../responses/catalog';
import { e, linksTo, READS_A_TOKEN } from './table';

// The catalog's operations: categories, products and drafts, shops and the v1 products.
const PRODUCT = {
  name: 'Yirgacheffe coffee 1 kg',
  description: '<p>Washed, single origin</p>',
  sellingPrice: 899.5,
  comparePrice: 950,
  stock: 40,
  discountCode: 'LAUNCH10',
  discountPercentage: 10,
  shippingHandler: 'Seller',
  deliveryCost: 50,
  categoryId: 'MKT-CAT-GROCERY0',
  properties: [{ propertyId: 'MKT-PRO-GRORGANC', value: true }],
};

/** The catalog's public operations. */
export const CATALOG_TABLE = [
  e('get', '/physical-products/categories', 'catalog', 'public', 'listCategories', 'Categories and their properties', {
    data: CategoriesResponse,
  }),
  e('post', '/physical-products/seller-products/', 'catalog', 'bearer', 'createProduct', 'Create a product', {
    errors: { 403: true, 422: ['invalid'] },
    body: CreateProductBody,
    example: PRODUCT,
    data: ProductCreatedResponse,
    links: linksTo(
      '/data/id',
      'referenceId',
      'get /physical-products/seller-products/{referenceId}',
      'patch /physical-products/seller-products/{referenceId}',
      'patch /physical-products/seller-products/{referenceId}/visibility',
      'delete /physical-products/seller-products/{referenceId}',
    ),
  }),
  e('get', '/physical-products/seller-products/', 'catalog', 'public', 'listProducts', 'Public products', {
    errors: READS_A_TOKEN,
    query: ProductListQuery,
    data: ProductListResponse,
    paged: true,
  }),
  e('get', '/physical-products/seller-products/my', 'catalog', 'bearer', 'listMyProducts', 'The caller’s products and drafts', {
    // Strict: an unknown query parameter is 400 (the public listing's filters mean nothing here).
    query: MyProductsQuery,
    data: MyProductsResponse,
    paged: true,
  }),
  e('get', '/physical-products/seller-products/{referenceId}', 'catalog', 'public', 'getProduct', 'A product', {
    errors: READS_A_TOKEN,
    params: ProductRefParams,
    data: ProductOrDraftResponse,
  }),
  e('patch', '/physical-products/seller-products/{referenceId}', 'catalog', 'bearer', 'updateProduct', 'Update (or publish a draft)', {
    errors: { 403: true, 422: ['invalid'] },
    params: ProductRefParams,
    body: UpdateProductBody,
    example: { sellingPrice: 850, stock: 35 },
    data: ProductOrDraftResponse,
  }),
  e('patch', '/physical-products/seller-products/{referenceId}/visibility', 'catalog', 'bearer', 'setProductVisibility', 'Set visibility', {
    errors: { 403: true },
    params: ProductRefParams,
    body: VisibilityBody,
    example: { visibility: 'Hidden' },
    data: ProductOrDraftResponse,
  }),
  e('delete', '/physical-products/seller-products/{referenceId}', 'catalog', 'bearer', 'deleteProduct', 'Delete a product', {
    errors: { 403: true },
    params: ProductRefParams,
    noData: true,
  }),
  e('post', '/physical-products/seller-products/draft', 'catalog', 'bearer', 'createProductDraft', 'Save a draft', {
    errors: { 403: true, 422: ['invalid'] },
    body: DraftBody,
    example: { categoryId: 'MKT-CAT-GROCERY0', metaData: { form: '{"name":"Yirgacheffe coffee"}' } },
    data: DraftResponse,
    links: linksTo(
      '/data/id',
      'referenceId',
      'patch /physical-products/seller-products/draft/{referenceId}',
      'get /physical-products/seller-products/{referenceId}',
    ),
  }),
  e('patch', '/physical-products/seller-products/draft/{referenceId}', 'catalog', 'bearer', 'updateProductDraft', 'Update a draft', {
    errors: { 403: true, 409: ['invalid_state'], 422: ['invalid'] },
    params: ProductRefParams,
    body: UpdateDraftBody,
    example: { metaData: { form: '{"name":"Yirgacheffe coffee","stock":40}' } },
    data: DraftResponse,
  }),
  e('post', '/v1/shops', 'catalog', 'bearer', 'createShop', 'Create a shop', {
    errors: { 403: true, 409: true },
    body: CreateShopBody,
    example: { name: 'Abebe Coffee', slug: 'abebe-coffee', country: 'ET', category: 'Coffee' },
    data: ShopResponse,
    links: linksTo('/data/id', 'shopId', 'get /v1/shops/{shopId}'),
  }),
  e('get', '/v1/shops/{shopId}', 'catalog', 'bearer', 'getShop', 'A shop', { params: ShopParams, data: ShopResponse }),
  e('post', '/v1/products', 'catalog', 'bearer', 'createV1Product', 'Create a product (minor units)', {
    errors: { 403: true, 409: true },
    body: CreateV1ProductBody,
    example: { title: 'Green beans 5 kg', price: 250000, currency: 'ETB', sku: 'BEANS-5KG', inventory: 12 },
    data: V1ProductResponse,
    links: linksTo('/data/id', 'productId', 'get /v1/products/{productId}'),
  }),
  e('get', '/v1/products/{productId}', 'catalog', 'bearer', 'getV1Product', 'A product', {
    params: V1ProductParams,
    data: V1ProductResponse,
  }),
  e('get', '/v1/products', 'catalog', 'bearer', 'listV1Products', 'Products', {
    query: V1ProductListQuery,
    data: V1ProductListResponse,
    paged: true,
  }),
] as const;
