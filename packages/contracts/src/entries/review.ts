/**
 * `@mkt/contracts/review`: the review's area — its request and response schemas and its slice of
 * the endpoint table (`OPERATIONS`, `ENDPOINTS`) — with `./core`. No other area's schemas.
 */
import { keyed, type Endpoint } from '../tables/table';
import { REVIEW_TABLE } from '../tables/review.table';

export * from './core';
export * from '../review';
export * from '../responses/review';

/** The review's operations keyed by operationId (the index's `OPERATIONS` narrowed to the review). */
export const OPERATIONS = keyed(REVIEW_TABLE);
/** The review's entries in the table's order. */
export const ENDPOINTS: Endpoint[] = Object.values(OPERATIONS);
