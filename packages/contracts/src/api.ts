import { z } from 'zod';
import { LoginBody, LogoutBody, RefreshBody, RegisterBody } from './auth';
import {
  CreateProductBody,
  CreateShopBody,
  CreateV1ProductBody,
  DraftBody,
  ProductListQuery,
  UpdateDraftBody,
  UpdateProductBody,
  V1ProductListQuery,
  VisibilityBody,
} from './catalog';
import {
  BookingListQuery,
  CancelBookingBody,
  ConsultationListQuery,
  CreateBookingBody,
  CreateConsultationBody,
  CreateDiscountBody,
  CreatePricingBody,
  CreateRuleSetBody,
  CreateVisibilityRuleSetBody,
  EndSessionBody,
  NoShowBody,
  SessionListQuery,
  SlotsQuery,
  StartSessionBody,
  UpdateConsultationBody,
  ValidateCouponBody,
  VisibilityStatusBody,
} from './consultation';
import { CreateCustomerBody, CustomerListQuery, HighValueQuery, RelationListQuery, UpdateCustomerBody } from './crm';
import { PageQuery } from './pagination';
import { CreateReviewBody, ReviewsByEntityQuery, UpdateReviewBody } from './review';
import {
  CancelPayoutBody,
  CheckoutForm,
  CheckoutQuery,
  CreatePayoutBody,
  CreateTopUpBody,
  CreateTransferBody,
  PayoutMoveBody,
  RateLimitStats,
  WalletView,
  Bank,
  TopUpCreated,
  TopUpStatusView,
  PayoutCreated,
  PayoutStatusView,
} from './wallet';

export type Service = 'gateway' | 'wallet' | 'catalog' | 'crm' | 'consultation' | 'review';
export type Access = 'public' | 'bearer' | 'admin' | 'signature';

/** One endpoint of the public API: the source of the OpenAPI document and of its tests. */
export interface Endpoint {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  service: Service;
  access: Access;
  summary: string;
  query?: z.ZodType;
  body?: z.ZodType;
  form?: z.ZodType;
  data?: z.ZodType;
  /** Answers something other than the JSON envelope (HTML page, redirect, JWKS). */
  produces?: 'html' | 'redirect' | 'jwks';
}

const e = (
  method: Endpoint['method'],
  path: string,
  service: Service,
  access: Access,
  summary: string,
  extra: Partial<Endpoint> = {},
): Endpoint => ({ method, path, service, access, summary, ...extra });

export const ENDPOINTS: Endpoint[] = [
  e('post', '/v1/auth/register', 'gateway', 'public', 'Register a buyer or seller', { body: RegisterBody }),
  e('post', '/v1/auth/login', 'gateway', 'public', 'Log in', { body: LoginBody }),
  e('post', '/v1/auth/refresh', 'gateway', 'public', 'Rotate a refresh token', { body: RefreshBody }),
  e('post', '/v1/auth/logout', 'gateway', 'public', 'Revoke a refresh token family', { body: LogoutBody }),
  e('get', '/v1/auth/me', 'gateway', 'bearer', 'The caller'),
  e('get', '/v1/auth/.well-known/jwks.json', 'gateway', 'public', 'The public key (JWKS)', { produces: 'jwks' }),

  e('post', '/wallets/users/{userReferenceId}/topup', 'wallet', 'bearer', 'Create a top-up (hosted checkout)', {
    body: CreateTopUpBody,
    data: TopUpCreated,
  }),
  e('get', '/wallets/topup/{walletReferenceId}/status', 'wallet', 'bearer', 'Top-up status', { data: TopUpStatusView }),
  e('post', '/wallets/users/{userReferenceId}/payout-request', 'wallet', 'bearer', 'Request a payout', {
    body: CreatePayoutBody,
    data: PayoutCreated,
  }),
  e('get', '/wallets/payout-requests/{referenceId}/status', 'wallet', 'bearer', 'Payout status', { data: PayoutStatusView }),
  e('post', '/wallets/payout-requests/{referenceId}/cancel', 'wallet', 'bearer', 'Cancel a pending payout', { body: CancelPayoutBody }),
  ...(['approve', 'reject', 'process', 'complete', 'fail'] as const).map((move) =>
    e('post', `/wallets/payout-requests/{referenceId}/${move}`, 'wallet', 'admin', `Payout: ${move}`, {
      body: PayoutMoveBody,
      data: PayoutStatusView,
    }),
  ),
  e('get', '/wallets/rate-limit/stats', 'wallet', 'bearer', 'Request limits of the caller', { data: RateLimitStats }),
  e('get', '/wallets/banks', 'wallet', 'bearer', 'Banks and mobile-money providers', { data: z.array(Bank) }),
  e('get', '/wallets/checkout/{walletReferenceId}', 'wallet', 'public', 'Sandbox hosted checkout page', {
    query: CheckoutQuery,
    produces: 'html',
  }),
  e('post', '/wallets/checkout/{walletReferenceId}/pay', 'wallet', 'public', 'Pay (sandbox checkout form)', {
    form: CheckoutForm,
    produces: 'redirect',
  }),
  e('post', '/wallets/checkout/{walletReferenceId}/cancel', 'wallet', 'public', 'Cancel (sandbox checkout form)', {
    form: CheckoutForm,
    produces: 'redirect',
  }),
  e('get', '/wallets/checkout/{walletReferenceId}/return', 'wallet', 'public', 'Return from a provider checkout', { produces: 'redirect' }),
  e('post', '/wallets/webhooks/chapa', 'wallet', 'signature', 'Chapa webhook (HMAC-SHA256 of the raw body)'),
  e('get', '/v1/wallet', 'wallet', 'bearer', 'The caller’s wallet', { data: WalletView }),
  e('post', '/v1/wallet/transfers', 'wallet', 'bearer', 'Transfer minor units to another user', { body: CreateTransferBody }),

  e('get', '/physical-products/categories', 'catalog', 'public', 'Categories and their properties'),
  e('post', '/physical-products/seller-products/', 'catalog', 'bearer', 'Create a product', { body: CreateProductBody }),
  e('get', '/physical-products/seller-products/', 'catalog', 'public', 'Public products', { query: ProductListQuery }),
  e('get', '/physical-products/seller-products/my', 'catalog', 'bearer', 'The caller’s products and drafts', { query: PageQuery }),
  e('get', '/physical-products/seller-products/{referenceId}', 'catalog', 'public', 'A product'),
  e('patch', '/physical-products/seller-products/{referenceId}', 'catalog', 'bearer', 'Update (or publish a draft)', {
    body: UpdateProductBody,
  }),
  e('patch', '/physical-products/seller-products/{referenceId}/visibility', 'catalog', 'bearer', 'Set visibility', {
    body: VisibilityBody,
  }),
  e('delete', '/physical-products/seller-products/{referenceId}', 'catalog', 'bearer', 'Delete a product'),
  e('post', '/physical-products/seller-products/draft', 'catalog', 'bearer', 'Save a draft', { body: DraftBody }),
  e('patch', '/physical-products/seller-products/draft/{referenceId}', 'catalog', 'bearer', 'Update a draft', { body: UpdateDraftBody }),
  e('post', '/v1/shops', 'catalog', 'bearer', 'Create a shop', { body: CreateShopBody }),
  e('get', '/v1/shops/{shopId}', 'catalog', 'bearer', 'A shop'),
  e('post', '/v1/products', 'catalog', 'bearer', 'Create a product (minor units)', { body: CreateV1ProductBody }),
  e('get', '/v1/products/{productId}', 'catalog', 'bearer', 'A product'),
  e('get', '/v1/products', 'catalog', 'bearer', 'Products', { query: V1ProductListQuery }),

  e('post', '/customers', 'crm', 'bearer', 'Create a relationship', { body: CreateCustomerBody }),
  e('get', '/customers', 'crm', 'bearer', 'The caller’s relationships', { query: CustomerListQuery }),
  e('get', '/customers/{id}', 'crm', 'bearer', 'A relationship'),
  e('put', '/customers/{id}', 'crm', 'bearer', 'Update a relationship', { body: UpdateCustomerBody }),
  e('delete', '/customers/{id}', 'crm', 'bearer', 'Delete a relationship'),
  e('get', '/customers/seller/{sellerId}', 'crm', 'bearer', 'A seller’s customers', { query: RelationListQuery }),
  e('get', '/customers/seller/{sellerId}/followers', 'crm', 'bearer', 'A seller’s followers', { query: RelationListQuery }),
  e('get', '/customers/seller/{sellerId}/favorites', 'crm', 'bearer', 'A seller’s favourites', { query: RelationListQuery }),
  e('get', '/customers/seller/{sellerId}/high-value', 'crm', 'bearer', 'High-value customers', { query: HighValueQuery }),
  e('get', '/customers/seller/{sellerId}/analytics', 'crm', 'bearer', 'Seller analytics'),
  e('get', '/customers/buyer/{buyerId}', 'crm', 'bearer', 'A buyer’s relationships', { query: RelationListQuery }),
  e('get', '/customers/buyer/{buyerId}/following', 'crm', 'bearer', 'Sellers a buyer follows', { query: RelationListQuery }),
  e('get', '/customers/buyer/{buyerId}/customers', 'crm', 'bearer', 'Sellers a buyer booked', { query: RelationListQuery }),

  e('post', '/consultations', 'consultation', 'bearer', 'Create a consultation', { body: CreateConsultationBody }),
  e('get', '/consultations', 'consultation', 'public', 'Consultations', { query: ConsultationListQuery }),
  e('get', '/consultations/{id}', 'consultation', 'public', 'A consultation with its price'),
  e('put', '/consultations/{id}', 'consultation', 'bearer', 'Update a consultation', { body: UpdateConsultationBody }),
  e('post', '/consultations/{id}/approve', 'consultation', 'admin', 'Approve and publish'),
  e('get', '/consultations/{id}/slots', 'consultation', 'public', 'Free slots', { query: SlotsQuery }),
  e('get', '/consultations/sessions', 'consultation', 'bearer', 'Sessions', { query: SessionListQuery }),
  e('post', '/consultations/sessions/{id}/start', 'consultation', 'bearer', 'Start a session', { body: StartSessionBody }),
  e('post', '/consultations/sessions/{id}/end', 'consultation', 'bearer', 'End a session', { body: EndSessionBody }),
  e('post', '/consultations/sessions/{id}/no-show', 'consultation', 'bearer', 'Mark a no-show', { body: NoShowBody }),
  e('post', '/consultations/bookings', 'consultation', 'bearer', 'Book a slot', { body: CreateBookingBody }),
  e('get', '/consultations/bookings', 'consultation', 'bearer', 'Bookings', { query: BookingListQuery }),
  e('post', '/consultations/bookings/cancel', 'consultation', 'bearer', 'Cancel a booking', { body: CancelBookingBody }),
  e('post', '/consultations/availability-rule-sets/rule-sets', 'consultation', 'bearer', 'Create a rule set', { body: CreateRuleSetBody }),
  e('get', '/consultations/availability-rule-sets/rule-sets', 'consultation', 'bearer', 'Rule sets', { query: PageQuery }),
  e('get', '/consultations/availability-rule-sets/rule-sets/{id}', 'consultation', 'bearer', 'A rule set'),
  e('post', '/consultations/pricing', 'consultation', 'bearer', 'Create pricing', { body: CreatePricingBody }),
  e('post', '/consultations/pricing/promotional-discounts', 'consultation', 'bearer', 'Create a discount', { body: CreateDiscountBody }),
  e('post', '/consultations/pricing/promotional-discounts/validate-coupon', 'consultation', 'bearer', 'Validate a coupon', {
    body: ValidateCouponBody,
  }),
  e('post', '/consultations/visibility/rule-sets', 'consultation', 'bearer', 'Create a visibility rule set', {
    body: CreateVisibilityRuleSetBody,
  }),
  e('post', '/consultations/visibility/status', 'consultation', 'bearer', 'Visibility of consultations', { body: VisibilityStatusBody }),

  e('post', '/reviews', 'review', 'bearer', 'Review a consultation', { body: CreateReviewBody }),
  e('get', '/reviews/by-entity', 'review', 'public', 'Reviews of an entity', { query: ReviewsByEntityQuery }),
  e('get', '/reviews/consultation/{id}/status', 'review', 'bearer', 'May the caller review?'),
  e('patch', '/reviews/{id}', 'review', 'bearer', 'Switch a review on or off', { body: UpdateReviewBody }),
];
