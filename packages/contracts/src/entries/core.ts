/**
 * `@mkt/contracts/core`: what every process shares and no area owns — the envelopes, error codes,
 * pagination, rules, references, money, countries, every event contract (services read each
 * other's events), the audit entry of an admin action, the access token's claims, the
 * subscriptions and the broker's routing, and the endpoint table's types. packages/kit loads only
 * this; each area's entry re-exports it. No area's request or response schema, no endpoint table,
 * no document builder (OpenAPI, AsyncAPI) and no event-schema comparator.
 */
export * from '../envelope';
export * from '../pagination';
export * from '../error-codes';
export * from '../rules';
export * from '../references';
export * from '../money';
export * from '../countries';
export * from '../events';
export * from '../admin-actions';
export * from '../access-claims';
export * from '../subscriptions';
export * from '../bus-access';
export { PaginationResponse } from '../responses/common';
export type { Access, Endpoint, ErrorStatus, KeyedTable, Service } from '../tables/table';
