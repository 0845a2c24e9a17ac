import { z } from 'zod';
import {
  ApprovalQueueQuery,
  ApprovalQueueResponse,
  AuditFilterQuery,
  AuditLogQuery,
  AuditLogResponse,
  HoldQueueQuery,
  HoldQueueResponse,
  PayoutQueueQuery,
  PayoutQueueResponse,
} from './admin';
import { LoginBody, LogoutBody, RefreshBody, RegisterBody } from './auth';
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
} from './catalog';
import {
  BookingListQuery,
  CancelBookingBody,
  ConsultationListQuery,
  CreateBookingBody,
  ApproveConsultationBody,
  CreateConsultationBody,
  CreateDiscountBody,
  CreatePricingBody,
  CreateRuleSetBody,
  CreateVisibilityRuleSetBody,
  EndSessionBody,
  KeyParams,
  NoShowBody,
  DisputeNoShowBody,
  SessionListQuery,
  SlotsQuery,
  StartSessionBody,
  UpdateConsultationBody,
  ValidateCouponBody,
  VisibilityStatusBody,
} from './consultation';
import {
  BuyerParams,
  CreateCustomerBody,
  CustomerListQuery,
  CustomerParams,
  HighValueQuery,
  RelationListQuery,
  SellerParams,
  UpdateCustomerBody,
} from './crm';
import type { ErrorCode } from './error-codes';
import { PageQuery } from './pagination';
import { CreateReviewBody, ReviewParams, ReviewsByEntityQuery, UpdateReviewBody } from './review';
import {
  BookingHoldParams,
  CancelPayoutBody,
  CheckoutForm,
  CheckoutQuery,
  CreatePayoutBody,
  CreateTopUpBody,
  CreateTransferBody,
  PayoutMoveBody,
  PayoutRefParams,
  TopUpRefParams,
  UserRefParams,
  StatementQuery,
  EarningsQuery,
  StatementExportQuery,
  TopUpHistoryQuery,
  PayoutHistoryQuery,
  TransferHistoryQuery,
  VoidBookingHoldBody,
  UpholdBookingHoldBody,
} from './wallet';
import { AuthSessionResponse, AuthUserResponse, JwksDocument } from './responses/auth';
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
} from './responses/catalog';
import {
  BookingCancelledResponse,
  BookingListResponse,
  BookingReceiptResponse,
  BookingResponse,
  ConsultationApprovedResponse,
  ConsultationCreatedResponse,
  ConsultationListResponse,
  ConsultationResponse,
  ConsultationUpdatedResponse,
  CouponQuoteResponse,
  DiscountCreatedResponse,
  PricingCreatedResponse,
  RuleSetCreatedResponse,
  RuleSetListResponse,
  RuleSetResponse,
  SessionEndedResponse,
  SessionListResponse,
  SessionNoShowResponse,
  SessionDisputedResponse,
  SessionStartedResponse,
  SlotsResponse,
  VisibilityRuleSetCreatedResponse,
  VisibilityStatusResponse,
} from './responses/consultation';
import {
  BuyerFollowingResponse,
  BuyerRelationshipsResponse,
  BuyerSellersResponse,
  HighValueCustomersResponse,
  OwnRelationshipsResponse,
  RelationshipCreatedResponse,
  RelationshipDeletedResponse,
  RelationshipResponse,
  RelationshipUpdatedResponse,
  SellerAnalyticsResponse,
  SellerCustomersResponse,
  SellerFavoritesResponse,
  SellerFollowersResponse,
} from './responses/crm';
import { ReviewCreatedResponse, ReviewStatusResponse, ReviewUpdatedResponse, ReviewsByEntityResponse } from './responses/review';
import {
  BanksResponse,
  BookingHoldAdminResponse,
  PayoutCreatedResponse,
  PayoutStatusResponse,
  RateLimitStatsResponse,
  TopUpCreatedResponse,
  TopUpStatusResponse,
  TransferResponse,
  StatementResponse,
  EarningsResponse,
  TopUpHistoryResponse,
  TopUpReceiptResponse,
  PayoutHistoryResponse,
  TransferHistoryResponse,
  WalletResponse,
  WebhookResponse,
} from './responses/wallet';

export type Service = 'gateway' | 'wallet' | 'catalog' | 'crm' | 'consultation' | 'review';
export type Access = 'public' | 'bearer' | 'admin' | 'signature';
/** The error statuses an operation may answer (ADR 0004). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 422 | 429 | 502 | 503 | 504;

/** One endpoint of the public API: the source of the OpenAPI document and of its tests. */
export interface Endpoint {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  service: Service;
  access: Access;
  /**
   * The operation's name in the OpenAPI document and in every client generated from it: verb
   * first (`createTopup`, `listSlots`), unique, and stable (renaming one breaks clients; the
   * release gate reports it).
   */
  operationId: string;
  summary: string;
  /** The path parameters as the service validates them. */
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  form?: z.ZodType;
  /** A request that succeeds (of `body` or `form`), shown in the document and checked against the schema. */
  example?: Record<string, unknown>;
  /**
   * The success envelope's `data` (strict: a field it does not name is a failure). With
   * `produces: 'jwks'`, the whole body.
   */
  data?: z.ZodType;
  /** Takes an `Idempotency-Key` header: the same key and body answer the first response again. */
  idempotent?: boolean;
  /** The envelope carries `pagination` beside `data`. */
  paged?: boolean;
  /** The success answer is `{ success, message }` without `data`. */
  noData?: boolean;
  /** Answers something other than the JSON envelope (HTML page, redirect, JWKS, CSV file); errors stay the envelope but a page's. */
  produces?: 'html' | 'redirect' | 'jwks' | 'csv';
  /**
   * Operations a success leads on to (OpenAPI links, `method path` → their path parameters read
   * from this answer, e.g. `$response.body#/data/id`): a fuzzer follows them with real records.
   */
  links?: Record<string, Record<string, string>>;
  /**
   * Error answers the rest of the entry does not imply (openapi.ts `errorAnswers` derives the
   * others: 400 from inputs, 401 from access, 404 from a path parameter, 409 from
   * `idempotent`...): a status → the codes it carries (`true`: its usual code), or `false` for a
   * derived one this operation never answers.
   */
  errors?: Partial<Record<ErrorStatus, readonly ErrorCode[] | boolean>>;
}

/** Links from a create to the operations on what it made, the id read at `pointer` of the answer. */
const linksTo = (pointer: string, param: string, ...targets: string[]) =>
  Object.fromEntries(targets.map((target) => [target, { [param]: `$response.body#${pointer}` }]));

/**
 * An entry with its literal types kept (method, path, service, access, operationId, and the very
 * schemas and flags of `extra`), so the table keyed by operationId (`OPERATIONS`) types each
 * operation's input and answer where kit mounts its handler.
 */
const e = <
  const M extends Endpoint['method'],
  const P extends string,
  const S extends Service,
  const A extends Access,
  const O extends string,
  const X extends Partial<Endpoint> = {}, // eslint-disable-line @typescript-eslint/no-empty-object-type
>(
  method: M,
  path: P,
  service: S,
  access: A,
  operationId: O,
  summary: string,
  extra: X = {} as X,
): { method: M; path: P; service: S; access: A; operationId: O; summary: string } & X => ({
  method,
  path,
  service,
  access,
  operationId,
  summary,
  ...extra,
});

/** A table keyed by its entries' operationIds, each entry's own (literal) type kept. */
export type KeyedTable<T extends readonly Endpoint[]> = { readonly [E in T[number] as E['operationId']]: E };

const keyed = <const T extends readonly Endpoint[]>(entries: T): KeyedTable<T> =>
  Object.fromEntries(entries.map((entry) => [entry.operationId, entry])) as KeyedTable<T>;

const WEEK = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const VALIDITY = { validFrom: '2026-12-01T00:00:00.000Z', validTo: '2026-12-31T23:59:59.000Z' };
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
const PAYOUT_NOTES = { adminNotes: 'Account checked' };
/** A public read that still verifies a token when one is sent: a token that is not valid is 401. */
const READS_A_TOKEN = { 401: true } as const;
/** A listing of one user's (the path's): the caller's own, or anyone's for an admin; else 403. */
const OWN_LISTING = { 403: true } as const;

const TABLE = [
  e('post', '/v1/auth/register', 'gateway', 'public', 'register', 'Register a buyer or seller', {
    errors: { 409: true, 422: ['invalid'] },
    body: RegisterBody,
    example: { email: 'sara@example.com', password: 'a long password', fullName: 'Sara Tesfaye', role: 'buyer' },
    data: AuthSessionResponse,
  }),
  e('post', '/v1/auth/login', 'gateway', 'public', 'login', 'Log in', {
    errors: { 401: true },
    body: LoginBody,
    example: { email: 'sara@example.com', password: 'a long password' },
    data: AuthSessionResponse,
  }),
  e('post', '/v1/auth/refresh', 'gateway', 'public', 'refreshSession', 'Rotate a refresh token', {
    errors: { 401: true },
    body: RefreshBody,
    example: { refreshToken: 'rt_8Jc3Vb0sQ1mZ4yX7wK2pL9nT6hF5gD3a' },
    data: AuthSessionResponse,
  }),
  e('post', '/v1/auth/logout', 'gateway', 'public', 'logout', 'Revoke a refresh token family', {
    body: LogoutBody,
    example: { refreshToken: 'rt_8Jc3Vb0sQ1mZ4yX7wK2pL9nT6hF5gD3a' },
    // The wire has `data: null`. Documented as a nullable object with no fields: a bare
    // `type: null` (or `const`/`enum` null) is a type no generator can name (typescript-fetch
    // emits a missing `./Null` model, or fails); this reads as `object | null` and is always null.
    data: z.null().meta({
      description: 'Always null: logging out answers no data.',
      override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
        Object.assign(jsonSchema, { type: ['object', 'null'], maxProperties: 0 });
      },
    }),
  }),
  e('get', '/v1/auth/me', 'gateway', 'bearer', 'getCurrentUser', 'The caller', { errors: { 404: true }, data: AuthUserResponse }),
  e('get', '/v1/auth/.well-known/jwks.json', 'gateway', 'public', 'getJwks', 'The public key (JWKS)', {
    errors: { 503: false },
    produces: 'jwks',
    data: JwksDocument,
  }),

  e('post', '/wallets/users/{userReferenceId}/topup', 'wallet', 'bearer', 'createTopup', 'Create a top-up (hosted checkout)', {
    errors: { 403: true, 422: ['invalid', 'amount_too_large', 'balance_limit_exceeded'], 502: ['bad_gateway', 'payment_provider_failed'] },
    params: UserRefParams,
    body: CreateTopUpBody,
    example: { amount: 300, paymentMethod: 'Chapa', redirectUrl: 'http://localhost:3000/done', notes: 'For bookings' },
    data: TopUpCreatedResponse,
    idempotent: true,
    links: linksTo('/data/referenceId', 'walletReferenceId', 'get /wallets/topup/{walletReferenceId}/status'),
  }),
  e('get', '/wallets/topup/{walletReferenceId}/status', 'wallet', 'bearer', 'getTopupStatus', 'Top-up status', {
    errors: { 403: true },
    params: TopUpRefParams,
    data: TopUpStatusResponse,
  }),
  e('post', '/wallets/users/{userReferenceId}/payout-request', 'wallet', 'bearer', 'createPayoutRequest', 'Request a payout', {
    errors: { 403: true, 422: ['invalid', 'insufficient_funds'] },
    params: UserRefParams,
    body: CreatePayoutBody,
    example: {
      amount: '150.00',
      bankCode: 'CBE',
      accountNumber: '1000123456789',
      accountName: 'Sara Tesfaye',
      reason: 'Monthly withdrawal',
    },
    data: PayoutCreatedResponse,
    idempotent: true,
    links: linksTo(
      '/data/referenceId',
      'referenceId',
      'get /wallets/payout-requests/{referenceId}/status',
      'post /wallets/payout-requests/{referenceId}/cancel',
    ),
  }),
  e('get', '/wallets/payout-requests/{referenceId}/status', 'wallet', 'bearer', 'getPayoutRequestStatus', 'Payout status', {
    errors: { 403: true },
    params: PayoutRefParams,
    data: PayoutStatusResponse,
  }),
  e('post', '/wallets/payout-requests/{referenceId}/cancel', 'wallet', 'bearer', 'cancelPayoutRequest', 'Cancel a pending payout', {
    errors: { 403: true, 409: ['invalid_state'] },
    params: PayoutRefParams,
    body: CancelPayoutBody,
    example: { reason: 'Changed my mind' },
    noData: true,
  }),
  ...(['approve', 'reject', 'process', 'complete', 'fail'] as const).map((move) =>
    e('post', `/wallets/payout-requests/{referenceId}/${move}`, 'wallet', 'admin', `${move}PayoutRequest`, `Payout: ${move}`, {
      errors: { 409: ['invalid_state'] },
      params: PayoutRefParams,
      body: PayoutMoveBody,
      example: PAYOUT_NOTES,
      data: PayoutStatusResponse,
    }),
  ),
  e('get', '/wallets/rate-limit/stats', 'wallet', 'bearer', 'getRateLimitStats', 'Request limits of the caller', {
    data: RateLimitStatsResponse,
  }),
  e('get', '/wallets/banks', 'wallet', 'bearer', 'listBanks', 'Banks and mobile-money providers', { data: BanksResponse }),
  e('get', '/wallets/checkout/{walletReferenceId}', 'wallet', 'public', 'getCheckoutPage', 'Sandbox hosted checkout page', {
    errors: { 409: true },
    params: TopUpRefParams,
    query: CheckoutQuery,
    produces: 'html',
  }),
  e('post', '/wallets/checkout/{walletReferenceId}/pay', 'wallet', 'public', 'payCheckout', 'Pay (sandbox checkout form)', {
    errors: { 409: true },
    params: TopUpRefParams,
    form: CheckoutForm,
    example: { token: 'Vb0sQ1mZ4yX7wK2pL9nT6hF5gD3a8Jc3' },
    produces: 'redirect',
  }),
  e('post', '/wallets/checkout/{walletReferenceId}/cancel', 'wallet', 'public', 'cancelCheckout', 'Cancel (sandbox checkout form)', {
    errors: { 409: true },
    params: TopUpRefParams,
    form: CheckoutForm,
    example: { token: 'Vb0sQ1mZ4yX7wK2pL9nT6hF5gD3a8Jc3' },
    produces: 'redirect',
  }),
  e('get', '/wallets/checkout/{walletReferenceId}/return', 'wallet', 'public', 'returnFromCheckout', 'Return from a provider checkout', {
    params: TopUpRefParams,
    produces: 'redirect',
  }),
  e('post', '/wallets/webhooks/chapa', 'wallet', 'signature', 'receiveChapaWebhook', 'Chapa webhook (HMAC-SHA256 of the raw body)', {
    errors: { 404: true },
    example: { tx_ref: 'MKT-TOP-UP-7Q2M9XKD', status: 'success' },
    data: WebhookResponse,
  }),
  e('get', '/wallets/booking-holds/{bookingId}', 'wallet', 'admin', 'getBookingHold', 'A paid booking’s hold', {
    params: BookingHoldParams,
    data: BookingHoldAdminResponse,
  }),
  e(
    'post',
    '/wallets/booking-holds/{bookingId}/void',
    'wallet',
    'admin',
    'voidBookingHold',
    'Void a Held hold by hand: all back to the buyer',
    {
      params: BookingHoldParams,
      body: VoidBookingHoldBody,
      example: { reason: 'The session never took place' },
      errors: { 409: true },
      data: BookingHoldAdminResponse,
    },
  ),
  e(
    'post',
    '/wallets/booking-holds/{bookingId}/uphold',
    'wallet',
    'admin',
    'upholdBookingHoldCapture',
    'Rule a disputed no-show for the seller: its capture goes on',
    {
      params: BookingHoldParams,
      body: UpholdBookingHoldBody,
      example: { reason: 'The seller waited the whole hour' },
      errors: { 409: true },
      data: BookingHoldAdminResponse,
    },
  ),
  e('get', '/v1/wallet', 'wallet', 'bearer', 'getWallet', 'The caller’s wallet', { data: WalletResponse }),
  e('post', '/v1/wallet/transfers', 'wallet', 'bearer', 'createTransfer', 'Transfer minor units to another user', {
    errors: { 404: true, 422: ['invalid', 'insufficient_funds', 'amount_too_large', 'currency_mismatch', 'balance_limit_exceeded'] },
    body: CreateTransferBody,
    example: { toUserId: '3f1c2a7e-8d4b-4c1e-9a2f-5b6c7d8e9f01', amount: 12000, currency: 'ETB' },
    data: TransferResponse,
    idempotent: true,
  }),
  // The caller's money: statement (keyset pages on the ledger's chain, and its CSV export) and histories.
  e(
    'get',
    '/v1/wallet/transactions',
    'wallet',
    'bearer',
    'listWalletTransactions',
    'The caller’s statement: every ledger entry, newest first',
    {
      query: StatementQuery,
      data: StatementResponse,
    },
  ),
  e(
    'get',
    '/v1/wallet/transactions.csv',
    'wallet',
    'bearer',
    'getWalletTransactionsCsv',
    'The caller’s statement as CSV (every entry the filters match)',
    {
      query: StatementExportQuery,
      produces: 'csv',
    },
  ),
  e('get', '/v1/wallet/topups', 'wallet', 'bearer', 'listMyTopups', 'The caller’s top-ups, newest first', {
    query: TopUpHistoryQuery,
    data: TopUpHistoryResponse,
    paged: true,
  }),
  e(
    'get',
    '/v1/wallet/topups/{walletReferenceId}/receipt',
    'wallet',
    'bearer',
    'getTopupReceipt',
    'The receipt of a completed top-up (its owner or an admin)',
    {
      errors: { 409: ['invalid_state'] },
      params: TopUpRefParams,
      data: TopUpReceiptResponse,
    },
  ),
  e(
    'get',
    '/v1/wallet/topups/{walletReferenceId}/receipt.html',
    'wallet',
    'bearer',
    'getTopupReceiptPage',
    'The receipt of a completed top-up as a printable page (its owner or an admin)',
    {
      errors: { 409: ['invalid_state'] },
      params: TopUpRefParams,
      produces: 'html',
    },
  ),
  e('get', '/v1/wallet/payouts', 'wallet', 'bearer', 'listMyPayoutRequests', 'The caller’s payout requests, newest first', {
    query: PayoutHistoryQuery,
    data: PayoutHistoryResponse,
    paged: true,
  }),
  e(
    'get',
    '/v1/wallet/earnings',
    'wallet',
    'bearer',
    'getMyEarnings',
    'The caller’s earnings: ahead, settling, available, earned, paid out',
    {
      query: EarningsQuery,
      data: EarningsResponse,
    },
  ),
  e('get', '/v1/wallet/transfers', 'wallet', 'bearer', 'listMyTransfers', 'The caller’s transfers, sent and received, newest first', {
    query: TransferHistoryQuery,
    data: TransferHistoryResponse,
    paged: true,
  }),

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

  e('post', '/customers', 'crm', 'bearer', 'createCustomer', 'Create a relationship', {
    // 422 not_eligible: the buyer has booked nothing of the seller's; invalid: followStatus contradicts isFollower.
    errors: { 403: true, 404: true, 409: true, 422: ['invalid', 'not_eligible'] },
    body: CreateCustomerBody,
    example: {
      sellerId: '8a7b6c5d-4e3f-4a2b-9c1d-0e9f8a7b6c5d',
      buyerId: '3f1c2a7e-8d4b-4c1e-9a2f-5b6c7d8e9f01',
      status: 'Active',
      customerType: 'New',
      // Following is the buyer's to set: a seller's create leaves it off.
      isFollower: false,
      followStatus: 'NotFollowing',
      notificationPreference: 'All',
      notes: 'Met at the coffee fair',
      tags: ['coffee'],
      isFavorite: false,
    },
    data: RelationshipCreatedResponse,
    links: linksTo('/data/id', 'id', 'get /customers/{id}', 'put /customers/{id}', 'delete /customers/{id}'),
  }),
  e('get', '/customers', 'crm', 'bearer', 'listCustomers', 'The caller’s relationships', {
    query: CustomerListQuery,
    data: OwnRelationshipsResponse,
  }),
  e('get', '/customers/{id}', 'crm', 'bearer', 'getCustomer', 'A relationship', {
    errors: { 403: true },
    params: CustomerParams,
    data: RelationshipResponse,
  }),
  e('put', '/customers/{id}', 'crm', 'bearer', 'updateCustomer', 'Update a relationship', {
    // 422 invalid: followStatus contradicts isFollower.
    errors: { 403: true, 422: ['invalid'] },
    params: CustomerParams,
    body: UpdateCustomerBody,
    example: { customerType: 'Regular', isFavorite: true, notes: 'Books every month', tags: ['coffee', 'monthly'] },
    data: RelationshipUpdatedResponse,
  }),
  e('delete', '/customers/{id}', 'crm', 'bearer', 'deleteCustomer', 'Delete a relationship', {
    errors: { 403: true },
    params: CustomerParams,
    data: RelationshipDeletedResponse,
  }),
  e('get', '/customers/seller/{sellerId}', 'crm', 'bearer', 'listSellerCustomers', 'A seller’s customers', {
    errors: OWN_LISTING,
    params: SellerParams,
    query: RelationListQuery,
    data: SellerCustomersResponse,
  }),
  e('get', '/customers/seller/{sellerId}/followers', 'crm', 'bearer', 'listSellerFollowers', 'A seller’s followers', {
    errors: OWN_LISTING,
    params: SellerParams,
    query: RelationListQuery,
    data: SellerFollowersResponse,
  }),
  e('get', '/customers/seller/{sellerId}/favorites', 'crm', 'bearer', 'listSellerFavorites', 'A seller’s favourites', {
    errors: OWN_LISTING,
    params: SellerParams,
    query: RelationListQuery,
    data: SellerFavoritesResponse,
  }),
  e('get', '/customers/seller/{sellerId}/high-value', 'crm', 'bearer', 'listHighValueCustomers', 'High-value customers', {
    errors: OWN_LISTING,
    params: SellerParams,
    query: HighValueQuery,
    data: HighValueCustomersResponse,
  }),
  e('get', '/customers/seller/{sellerId}/analytics', 'crm', 'bearer', 'getSellerAnalytics', 'Seller analytics', {
    errors: OWN_LISTING,
    params: SellerParams,
    data: SellerAnalyticsResponse,
  }),
  e('get', '/customers/buyer/{buyerId}', 'crm', 'bearer', 'listBuyerRelationships', 'A buyer’s relationships', {
    errors: OWN_LISTING,
    params: BuyerParams,
    query: RelationListQuery,
    data: BuyerRelationshipsResponse,
  }),
  e('get', '/customers/buyer/{buyerId}/following', 'crm', 'bearer', 'listBuyerFollowing', 'Sellers a buyer follows', {
    errors: OWN_LISTING,
    params: BuyerParams,
    query: RelationListQuery,
    data: BuyerFollowingResponse,
  }),
  e('get', '/customers/buyer/{buyerId}/customers', 'crm', 'bearer', 'listBuyerSellers', 'Sellers a buyer booked', {
    errors: OWN_LISTING,
    params: BuyerParams,
    query: RelationListQuery,
    data: BuyerSellersResponse,
  }),

  e('post', '/consultations', 'consultation', 'bearer', 'createConsultation', 'Create a consultation', {
    errors: { 403: true, 404: true, 422: ['invalid', 'limit_reached'] },
    body: CreateConsultationBody,
    example: {
      title: 'Business plan review',
      description: 'An hour on your plan: market, numbers, next steps',
      duration: 60,
      sessionType: 'OneToOne',
      maxCapacity: 1,
      deliveryMode: 'Online',
      timezone: 'Africa/Addis_Ababa',
      language: 'Amharic',
      category: 'Business',
      subcategory: ['Start-ups'],
      tags: ['planning'],
      ruleSetId: 'MKT-AVL-RST-7Q2M9XKD',
      pricingId: 'PR_7Q2M9XKD',
    },
    data: ConsultationCreatedResponse,
    links: linksTo('/data/id', 'id', 'get /consultations/{id}', 'put /consultations/{id}', 'get /consultations/{id}/slots'),
  }),
  e('get', '/consultations', 'consultation', 'public', 'listConsultations', 'Consultations', {
    errors: READS_A_TOKEN,
    query: ConsultationListQuery,
    data: ConsultationListResponse,
  }),
  e('get', '/consultations/{id}', 'consultation', 'public', 'getConsultation', 'A consultation with its price', {
    errors: READS_A_TOKEN,
    params: KeyParams,
    data: ConsultationResponse,
  }),
  e('put', '/consultations/{id}', 'consultation', 'bearer', 'updateConsultation', 'Update a consultation', {
    errors: { 403: true, 409: ['conflict'], 422: ['invalid'] },
    params: KeyParams,
    body: UpdateConsultationBody,
    example: { title: 'Business plan review (90 min)', duration: 90, tags: ['planning', 'finance'] },
    data: ConsultationUpdatedResponse,
  }),
  e(
    'post',
    '/consultations/{id}/approve',
    'consultation',
    'admin',
    'approveConsultation',
    'Approve and publish the version read (`version`), or approve a pending edit (`revisionId`)',
    {
      errors: { 409: ['invalid_state', 'conflict'], 422: ['invalid'] },
      params: KeyParams,
      body: ApproveConsultationBody,
      example: { version: 2 },
      data: ConsultationApprovedResponse,
    },
  ),
  e('get', '/consultations/{id}/slots', 'consultation', 'public', 'listSlots', 'Free slots', {
    errors: { ...READS_A_TOKEN, 422: ['invalid'] },
    params: KeyParams,
    query: SlotsQuery,
    data: SlotsResponse,
  }),
  e('get', '/consultations/sessions', 'consultation', 'bearer', 'listSessions', 'Sessions', {
    query: SessionListQuery,
    data: SessionListResponse,
  }),
  e('post', '/consultations/sessions/{id}/start', 'consultation', 'bearer', 'startSession', 'Start a session', {
    errors: { 403: true, 409: ['invalid_state'], 422: ['invalid', 'too_early'] },
    params: KeyParams,
    body: StartSessionBody,
    example: { actualStartTime: '2026-11-26T06:00:00.000Z', notes: 'Started on time' },
    data: SessionStartedResponse,
  }),
  e('post', '/consultations/sessions/{id}/end', 'consultation', 'bearer', 'endSession', 'End a session', {
    errors: { 403: true, 409: ['invalid_state'], 422: ['invalid'] },
    params: KeyParams,
    body: EndSessionBody,
    example: {
      actualEndTime: '2026-11-26T07:00:00.000Z',
      notes: 'Covered the whole plan',
      sessionSummary: 'Market sizing and pricing reviewed',
      nextSteps: 'Send the revised cash-flow sheet',
    },
    data: SessionEndedResponse,
  }),
  e('post', '/consultations/sessions/{id}/no-show', 'consultation', 'bearer', 'markSessionNoShow', 'Mark a no-show', {
    errors: { 403: true, 409: ['invalid_state'], 422: ['no_show_too_early'] },
    params: KeyParams,
    body: NoShowBody,
    example: { notes: 'Nobody joined', attemptedContact: true, contactMethod: 'phone' },
    data: SessionNoShowResponse,
  }),
  e('post', '/consultations/sessions/{id}/dispute', 'consultation', 'bearer', 'disputeSessionNoShow', 'Dispute a no-show (its buyer)', {
    errors: { 403: true, 409: ['invalid_state'] },
    params: KeyParams,
    body: DisputeNoShowBody,
    example: { reason: 'I joined on time; nobody was there' },
    data: SessionDisputedResponse,
  }),
  e('post', '/consultations/bookings', 'consultation', 'bearer', 'createBooking', 'Book a slot', {
    errors: {
      403: true,
      404: true,
      409: ['invalid_state'],
      422: [
        'invalid',
        'not_bookable',
        'slot_unavailable',
        'coupon_invalid',
        'price_mismatch',
        'insufficient_funds',
        'payment_declined',
        'payment_failed',
      ],
    },
    body: CreateBookingBody,
    example: {
      SellerId: '8a7b6c5d-4e3f-4a2b-9c1d-0e9f8a7b6c5d',
      consultationId: 'MKT-CON-7Q2M9XKD',
      ruleSetId: 'MKT-AVL-RST-7Q2M9XKD',
      date: '2026-11-26',
      startTime: '09:00',
      endTime: '10:00',
      participants: [{ fullName: 'Sara Tesfaye', email: 'sara@example.com', phone: '+251911223344' }],
      subTotal: 750,
      totalAmount: 750,
      currency: 'ETB',
      notes: 'First session',
    },
    data: BookingResponse,
    idempotent: true,
    links: linksTo('/data/bookingId', 'id', 'get /consultations/bookings/{id}'),
  }),
  e('get', '/consultations/bookings/{id}', 'consultation', 'bearer', 'getBooking', 'A booking', {
    params: KeyParams,
    data: BookingResponse,
  }),
  e(
    'get',
    '/consultations/bookings/{id}/receipt',
    'consultation',
    'bearer',
    'getBookingReceipt',
    'A booking’s receipt (its buyer, its seller or an admin)',
    {
      params: KeyParams,
      data: BookingReceiptResponse,
    },
  ),
  e(
    'get',
    '/consultations/bookings/{id}/receipt.html',
    'consultation',
    'bearer',
    'getBookingReceiptPage',
    'A booking’s receipt as a printable page (its buyer, its seller or an admin)',
    {
      params: KeyParams,
      produces: 'html',
    },
  ),
  e('get', '/consultations/bookings', 'consultation', 'bearer', 'listBookings', 'Bookings', {
    query: BookingListQuery,
    data: BookingListResponse,
  }),
  e('post', '/consultations/bookings/cancel', 'consultation', 'bearer', 'cancelBooking', 'Cancel a booking', {
    errors: { 403: true, 404: true, 409: ['invalid_state'], 422: ['cancellation_closed', 'refund_too_large'] },
    body: CancelBookingBody,
    example: {
      bookingId: 'BK_7Q2M9XKD',
      reason: 'Travelling that week',
      refundRequested: true,
      notes: 'Will book again',
      cancellationType: 'buyer_request',
      refundAmount: 60,
    },
    data: BookingCancelledResponse,
  }),
  e('post', '/consultations/availability-rule-sets/rule-sets', 'consultation', 'bearer', 'createRuleSet', 'Create a rule set', {
    errors: { 403: true, 422: ['invalid'] },
    body: CreateRuleSetBody,
    example: {
      name: 'Mornings',
      description: 'Weekday mornings',
      timezone: 'Africa/Addis_Ababa',
      durationType: 'Indefinite',
      isDefault: true,
      metaData: { autoAccept: true, bufferTime: 0, maxBookingsPerDay: 50 },
      availabilityRules: WEEK.slice(0, 5).map((weekday) => ({
        type: 'weekly',
        weekday,
        intervals: [{ start_time: '09:00:00', end_time: '12:00:00', enabled: true }],
      })),
    },
    data: RuleSetCreatedResponse,
    links: linksTo('/data/id', 'id', 'get /consultations/availability-rule-sets/rule-sets/{id}'),
  }),
  e('get', '/consultations/availability-rule-sets/rule-sets', 'consultation', 'bearer', 'listRuleSets', 'Rule sets', {
    query: PageQuery,
    data: RuleSetListResponse,
    paged: true,
  }),
  e('get', '/consultations/availability-rule-sets/rule-sets/{id}', 'consultation', 'bearer', 'getRuleSet', 'A rule set', {
    errors: { 403: true },
    params: KeyParams,
    data: RuleSetResponse,
  }),
  e('post', '/consultations/pricing', 'consultation', 'bearer', 'createPricing', 'Create pricing', {
    errors: { 403: true, 422: ['invalid'] },
    body: CreatePricingBody,
    example: { basePrice: 750, currency: 'ETB', pricingStrategy: 'Fixed', comparePrice: 900, isOnSale: true, isActive: true },
    data: PricingCreatedResponse,
  }),
  e('post', '/consultations/pricing/promotional-discounts', 'consultation', 'bearer', 'createDiscount', 'Create a discount', {
    errors: { 403: true, 409: true, 422: ['invalid'] },
    body: CreateDiscountBody,
    example: {
      name: 'Launch week',
      description: '10% off the first week',
      discountType: 'Percentage',
      discountValue: 10,
      ...VALIDITY,
      couponCode: 'LAUNCH10',
      maxUses: 100,
      maxUsesPerBuyer: 1,
      isActive: true,
    },
    data: DiscountCreatedResponse,
  }),
  e(
    'post',
    '/consultations/pricing/promotional-discounts/validate-coupon',
    'consultation',
    'bearer',
    'validateCoupon',
    'Validate a coupon',
    {
      errors: { 403: true, 404: true },
      body: ValidateCouponBody,
      example: { couponCode: 'LAUNCH10', consultationId: 'MKT-CON-7Q2M9XKD' },
      data: CouponQuoteResponse,
    },
  ),
  e('post', '/consultations/visibility/rule-sets', 'consultation', 'bearer', 'createVisibilityRuleSet', 'Create a visibility rule set', {
    errors: { 403: true, 422: ['invalid'] },
    body: CreateVisibilityRuleSetBody,
    example: {
      name: 'Buyers only',
      description: 'Hidden from sellers browsing',
      isDefault: true,
      isActive: true,
      ...VALIDITY,
      visibilityRules: [
        { type: 'user_type', condition: 'seller', action: 'hide', priority: 1 },
        { type: 'user_type', condition: '*', action: 'show', priority: 2 },
      ],
    },
    data: VisibilityRuleSetCreatedResponse,
  }),
  e('post', '/consultations/visibility/status', 'consultation', 'bearer', 'getVisibilityStatus', 'Visibility of consultations', {
    errors: { 403: true, 422: ['invalid'] },
    body: VisibilityStatusBody,
    example: { consultationIds: ['MKT-CON-7Q2M9XKD'], context: { userType: 'buyer', location: 'ET' } },
    data: VisibilityStatusResponse,
  }),

  e('post', '/reviews', 'review', 'bearer', 'createReview', 'Review a consultation', {
    errors: { 409: true, 422: ['not_eligible'] },
    body: CreateReviewBody,
    example: { entityType: 'consultation_service', entityId: 'MKT-CON-7Q2M9XKD', rating: 5, comment: 'Clear and practical' },
    data: ReviewCreatedResponse,
    links: linksTo('/data/reviewId', 'id', 'patch /reviews/{id}'),
  }),
  e('get', '/reviews/by-entity', 'review', 'public', 'listReviewsByEntity', 'Reviews of an entity', {
    query: ReviewsByEntityQuery,
    data: ReviewsByEntityResponse,
  }),
  e('get', '/reviews/consultation/{id}/status', 'review', 'bearer', 'getReviewStatus', 'May the caller review?', {
    params: ReviewParams,
    data: ReviewStatusResponse,
  }),
  e('patch', '/reviews/{id}', 'review', 'bearer', 'setReviewActive', 'Switch a review on or off', {
    errors: { 403: true, 409: ['invalid_state'] },
    params: ReviewParams,
    body: UpdateReviewBody,
    example: { isActive: false },
    data: ReviewUpdatedResponse,
  }),

  // The admins' queues and audit log (admins only).
  e(
    'get',
    '/wallets/admin/payout-requests',
    'wallet',
    'admin',
    'listPayoutQueue',
    'Payouts waiting for an admin, with the four-eyes rule',
    {
      query: PayoutQueueQuery,
      data: PayoutQueueResponse,
      paged: true,
    },
  ),
  e('get', '/wallets/admin/booking-holds', 'wallet', 'admin', 'listHoldQueue', 'Booking holds overdue or disputed', {
    query: HoldQueueQuery,
    data: HoldQueueResponse,
    paged: true,
  }),
  e(
    'get',
    '/consultations/admin/approvals',
    'consultation',
    'admin',
    'listApprovalQueue',
    'Consultations and revisions waiting for approval',
    { query: ApprovalQueueQuery, data: ApprovalQueueResponse, paged: true },
  ),
  e('get', '/v1/admin/audit-log', 'gateway', 'admin', 'listAuditLog', 'The audit log of admin actions (newest first)', {
    query: AuditLogQuery,
    data: AuditLogResponse,
  }),
  e('get', '/v1/admin/audit-log/export', 'gateway', 'admin', 'getAuditLogCsv', 'The audit log as CSV (the same filters)', {
    query: AuditFilterQuery,
    produces: 'csv',
  }),
] as const;

/**
 * The public endpoint table keyed by operationId: `OPERATIONS.createBooking` is the entry with its
 * schemas' own types, from which kit types a service's handlers (`mountOperations`).
 */
export const OPERATIONS = keyed(TABLE);
export type Operations = typeof OPERATIONS;
export type OperationId = keyof Operations;

/** The same entries in the table's order: the OpenAPI document, the gateway's routes and the tests iterate it. */
export const ENDPOINTS: Endpoint[] = [...TABLE];
