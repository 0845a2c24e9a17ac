/**
 * `@mkt/contracts/wallet`: the wallet's area — its request and response schemas, its admin queues,
 * its internal hold endpoints and its slice of the endpoint table (`OPERATIONS`, `ENDPOINTS`: the
 * wallet's entries of the index's, the same objects) — with `./core`. No other area's schemas.
 */
import { keyed, type Endpoint } from '../tables/table';
import { WALLET_ADMIN_TABLE, WALLET_TABLE } from '../tables/wallet.table';

export * from './core';
export * from '../wallet';
export * from '../responses/wallet';
export * from '../admin-wallet';
export * from '../internal-api';

/** The wallet's operations keyed by operationId (the index's `OPERATIONS` narrowed to the wallet). */
export const OPERATIONS = keyed([...WALLET_TABLE, ...WALLET_ADMIN_TABLE]);
/** The wallet's entries in the table's order. */
export const ENDPOINTS: Endpoint[] = Object.values(OPERATIONS);
