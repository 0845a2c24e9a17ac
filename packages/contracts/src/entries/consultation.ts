/**
 * `@mkt/contracts/consultation`: the consultation's area — its request and response schemas, its
 * approval queue, the wallet's internal hold it calls (`bookingHoldBody`, booking-holds.ts) and its
 * slice of the endpoint table (`OPERATIONS`, `ENDPOINTS`) — with `./core`. No other area's schemas.
 */
import { keyed, type Endpoint } from '../tables/table';
import { CONSULTATION_ADMIN_TABLE, CONSULTATION_TABLE } from '../tables/consultation.table';

export * from './core';
export * from '../consultation';
export * from '../responses/consultation';
export * from '../admin-consultation';
export * from '../booking-holds';

/** The consultation's operations keyed by operationId (the index's `OPERATIONS` narrowed to the consultation). */
export const OPERATIONS = keyed([...CONSULTATION_TABLE, ...CONSULTATION_ADMIN_TABLE]);
/** The consultation's entries in the table's order. */
export const ENDPOINTS: Endpoint[] = Object.values(OPERATIONS);
