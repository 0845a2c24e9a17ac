/**
 * `@mkt/contracts/routes`: no schema (no zod) — the method, path and service of every public
 * operation (`ROUTE_LIST`, generated from the endpoint table by `node scripts/contracts.mjs routes`),
 * for the gateway's proxy, which routes by path and must not load every area's schemas to do so.
 */
export { ROUTE_LIST, type RouteEntry } from '../route-list.generated';
export type { Service } from '../tables/table';
