/** Stable error codes. Clients branch on these, never on messages. */
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
  slotUnavailable: 'slot_unavailable',
  notEligible: 'not_eligible',
  couponInvalid: 'coupon_invalid',
  /** Wallet: the amount's currency is not the wallet's. */
  currencyMismatch: 'currency_mismatch',
  /** Wallet: a credit would take a balance past its ceiling. */
  balanceLimitExceeded: 'balance_limit_exceeded',
  /** Wallet: one top-up or transfer over its maximum. */
  amountTooLarge: 'amount_too_large',
  /** Wallet (502): the payment provider failed or answered nonsense. */
  paymentProviderFailed: 'payment_provider_failed',
  badGateway: 'bad_gateway',
  unavailable: 'unavailable',
  gatewayTimeout: 'gateway_timeout',
  internal: 'internal',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
