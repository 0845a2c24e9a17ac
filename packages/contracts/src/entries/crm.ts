/**
 * `@mkt/contracts/crm`: the CRM's area — its request and response schemas and its slice of the
 * endpoint table (`OPERATIONS`, `ENDPOINTS`) — with `./core`. No other area's schemas.
 */
import { keyed, type Endpoint } from '../tables/table';
import { CRM_TABLE } from '../tables/crm.table';

export * from './core';
export * from '../crm';
export * from '../responses/crm';

/** The CRM's operations keyed by operationId (the index's `OPERATIONS` narrowed to the CRM). */
export const OPERATIONS = keyed(CRM_TABLE);
/** The CRM's entries in the table's order. */
export const ENDPOINTS: Endpoint[] = Object.values(OPERATIONS);
