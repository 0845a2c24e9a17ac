/**
 * `@mkt/contracts/endpoints`: the whole public endpoint table (`ENDPOINTS`, `OPERATIONS`: every
 * area's schemas) without the documents built from it — for the gateway's proxy routes, which
 * name every operation but build neither the OpenAPI nor the AsyncAPI document.
 */
export { ENDPOINTS, OPERATIONS, type OperationId, type Operations } from '../api';
export type { Access, Endpoint, ErrorStatus, KeyedTable, Service } from '../tables/table';
