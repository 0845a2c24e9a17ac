/**
 * Stable error codes. Clients branch on these, never on messages. The general ones first, then
 * the business rules (422 unless said) the services answer; the OpenAPI document names, per
 * operation, the ones it may answer (api.ts `errors`).
 */
export const ErrorCode = {
  invalid: 'invalid',
  unauthenticated: 'unauthenticated',
  forbidden: 'forbidden',
  notFound: 'not_found',
  methodNotAllowed: 'method_not_allowed',
  conflict: 'conflict',
  invalidState: 'invalid_state',
  payloadTooLarge: 'payload_too_large',
  unsupportedMediaType: 'unsupported_media_type',
  rateLimited: 'rate_limited',
  insufficientFunds: 'insufficient_funds',
  /** Wallet: the amount's currency is not the wallet's. */
  currencyMismatch: 'currency_mismatch',
  /** Wallet: one top-up or transfer over its maximum. */
  amountTooLarge: 'amount_too_large',
  /** Wallet: a credit would take a balance past its ceiling. */
  balanceLimitExceeded: 'balance_limit_exceeded',
  slotUnavailable: 'slot_unavailable',
  notBookable: 'not_bookable',
  priceMismatch: 'price_mismatch',
  couponInvalid: 'coupon_invalid',
  paymentDeclined: 'payment_declined',
  paymentFailed: 'payment_failed',
  cancellationClosed: 'cancellation_closed',
  refundTooLarge: 'refund_too_large',
  tooEarly: 'too_early',
  /** Consultation: a no-show is marked only once the slot's grace has passed (README "No-shows"). */
  noShowTooEarly: 'no_show_too_early',
  notEligible: 'not_eligible',
  /** Consultation: a seller already has as many consultations as one may (`MAX_CONSULTATIONS_PER_SELLER`). */
  limitReached: 'limit_reached',
  /** 502 from the wallet itself: the payment provider failed to answer. */
  paymentProviderFailed: 'payment_provider_failed',
  badGateway: 'bad_gateway',
  unavailable: 'unavailable',
  gatewayTimeout: 'gateway_timeout',
  internal: 'internal',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
