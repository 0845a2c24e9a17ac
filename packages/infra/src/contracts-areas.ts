import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { workspaceRoot } from './mongo';

/** The contracts' areas: a service's own (`@mkt/contracts/<service>`). */
export type ContractsArea = 'wallet' | 'catalog' | 'crm' | 'consultation' | 'review' | 'gateway';

/**
 * The contracts' source modules each area owns (packages/contracts/src, without `.ts`); what no
 * area names (envelopes, events, references, money, the table's types…) is `@mkt/contracts/core`,
 * which every area loads. The consultation calls the wallet's internal hold (booking-holds).
 */
const AREA_MODULES: Record<ContractsArea, readonly string[]> = {
  wallet: ['wallet', 'booking-holds', 'internal-api', 'admin-wallet', 'responses/wallet', 'tables/wallet.table', 'entries/wallet'],
  catalog: ['catalog', 'responses/catalog', 'tables/catalog.table', 'entries/catalog'],
  crm: ['crm', 'responses/crm', 'tables/crm.table', 'entries/crm'],
  consultation: [
    'consultation',
    'booking-holds',
    'admin-consultation',
    'responses/consultation',
    'tables/consultation.table',
    'entries/consultation',
  ],
  review: ['review', 'responses/review', 'tables/review.table', 'entries/review'],
  gateway: ['auth', 'admin', 'responses/auth', 'tables/auth.table', 'entries/gateway'],
};

/**
 * What no service's process loads: the index, the whole endpoint table (`api`, `/endpoints`: every
 * area's schemas; the gateway's proxy routes from the schema-free `/routes`) and what only the
 * documents and the release gate need.
 */
const NEVER_LOADED = ['index', 'api', 'entries/endpoints', 'openapi', 'asyncapi', 'compat/event-schema-compat', 'responses/index'];

/**
 * The contracts' source files a process of `area` must not load (absolute paths, those that
 * exist): the index, the whole endpoint table, the document builders, the event-schema comparator
 * and every other area's modules (the gateway's too: its proxy routes from the schema-free
 * `@mkt/contracts/routes`). A test mocks each to throw, then requires the service's composition
 * and app (`services/<service>/test/contracts-area.test.ts`).
 */
export function contractsOutsideArea(area: ContractsArea): string[] {
  const own = new Set(AREA_MODULES[area]);
  const others = Object.values(AREA_MODULES).flatMap((modules) => modules.filter((module) => !own.has(module)));
  const src = join(workspaceRoot(), 'packages', 'contracts', 'src');
  return [...new Set([...NEVER_LOADED, ...others])].map((module) => join(src, `${module}.ts`)).filter((file) => existsSync(file));
}
