/**
 * `@mkt/contracts/catalog`: the catalog's area — its request and response schemas and its slice of
 * the endpoint table (`OPERATIONS`, `ENDPOINTS`) — with `./core`. No other area's schemas.
 */
import { keyed, type Endpoint } from '../tables/table';
import { CATALOG_TABLE } from '../tables/catalog.table';

export * from './core';
export * from '../catalog';
export * from '../responses/catalog';

/** The catalog's operations keyed by operationId (the index's `OPERATIONS` narrowed to the catalog). */
export const OPERATIONS = keyed(CATALOG_TABLE);
/** The catalog's entries in the table's order. */
export const ENDPOINTS: Endpoint[] = Object.values(OPERATIONS);
