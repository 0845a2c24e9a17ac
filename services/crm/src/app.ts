import type { Express } from 'express';
import { ENDPOINTS } from '@mkt/contracts/crm';
import { createService, mountEndpoints } from '@mkt/kit/http';
import type { Runtime } from '@mkt/kit/runtime';
import type { Relationships } from './application/relationships.use-cases';
import type { CrmConfig } from './config';
import { customerHandlers } from './http/customers.handlers';

/** What the HTTP layer calls: the application services (composition.ts builds them). */
export interface CrmHttpParts {
  relationships: Relationships;
}

export interface AppDeps {
  config: Readonly<CrmConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness' | 'accessKeys'>;
  parts: CrmHttpParts;
}

/** The CRM's entries of the contracts' endpoint table: every `/customers` path needs a verified token. */
export function createApp({ runtime, parts }: AppDeps): Express {
  return createService({
    name: 'crm',
    log: runtime.log,
    readiness: runtime.readiness,
    routes: (app) =>
      mountEndpoints(app, {
        service: 'crm',
        tables: [ENDPOINTS],
        publicKey: runtime.accessKeys,
        guardedPrefixes: ['/customers'],
        // These answered with and without their final slash (a router's root under `/customers`).
        optionalTrailingSlash: ['GET /customers', 'POST /customers'],
        handlers: customerHandlers(parts.relationships),
      }),
  });
}
