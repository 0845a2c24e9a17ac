import { AUDIT_TABLE, AUTH_TABLE } from './tables/auth.table';
import { CATALOG_TABLE } from './tables/catalog.table';
import { CONSULTATION_ADMIN_TABLE, CONSULTATION_TABLE } from './tables/consultation.table';
import { CRM_TABLE } from './tables/crm.table';
import { REVIEW_TABLE } from './tables/review.table';
import { keyed, type Endpoint } from './tables/table';
import { WALLET_ADMIN_TABLE, WALLET_TABLE } from './tables/wallet.table';

export type { Access, Endpoint, ErrorStatus, KeyedTable, Service } from './tables/table';

/**
 * The whole public endpoint table, in the order the OpenAPI document lists it: each area's table
 * (tables/*.table.ts, which an area's entry loads alone), then the admins' queues and audit log.
 */
const TABLE = [
  ...AUTH_TABLE,
  ...WALLET_TABLE,
  ...CATALOG_TABLE,
  ...CRM_TABLE,
  ...CONSULTATION_TABLE,
  ...REVIEW_TABLE,
  ...WALLET_ADMIN_TABLE,
  ...CONSULTATION_ADMIN_TABLE,
  ...AUDIT_TABLE,
] as const;

/**
 * The public endpoint table keyed by operationId: `OPERATIONS.createBooking` is the entry with its
 * schemas' own types, from which kit types a service's handlers (`mountOperations`).
 */
export const OPERATIONS = keyed(TABLE);
export type Operations = typeof OPERATIONS;
export type OperationId = keyof Operations;

/** The same entries in the table's order: the OpenAPI document, the gateway's routes and the tests iterate it. */
export const ENDPOINTS: Endpoint[] = [...TABLE];
