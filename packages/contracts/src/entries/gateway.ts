/**
 * `@mkt/contracts/gateway`: what the gateway serves itself — sign-up and sessions (auth), the
 * audit log of admin actions — and its slice of the endpoint table (`OPERATIONS`, `ENDPOINTS`),
 * with `./core`. The routes it proxies come from `./endpoints`; the documents from the index.
 */
import { keyed, type Endpoint } from '../tables/table';
import { AUDIT_TABLE, AUTH_TABLE } from '../tables/auth.table';

export * from './core';
export * from '../auth';
export * from '../responses/auth';
export * from '../admin';

/** The gateway's own operations keyed by operationId (the index's `OPERATIONS` narrowed to the gateway). */
export const OPERATIONS = keyed([...AUTH_TABLE, ...AUDIT_TABLE]);
/** The gateway's own entries in the table's order. */
export const ENDPOINTS: Endpoint[] = Object.values(OPERATIONS);
