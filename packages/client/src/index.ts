export {
  MarketplaceClient,
  type AuthSession,
  type CheckoutOutcome,
  type ItemOf,
  type MarketplaceClientOptions,
  type Page,
  type PageOptions,
  type Parameters,
  type Paths,
  type PathsOf,
  type RegisterBody,
  type RequestBody,
  type ResponseData,
  type SuccessBody,
} from './client';
export { ApiError, type ErrorDetail } from './errors';
export { backoffMs, retryAfterMs, RETRY_DEFAULTS, type RetryOptions } from './retry';
export { accessTokenExpired, type Tokens } from './tokens';
export type { components, operations, paths } from './generated/openapi';
export { IDEMPOTENT_OPERATIONS } from './generated/operations';
