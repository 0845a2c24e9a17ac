import type { Express } from 'express';
import { authenticate, createService, type Runtime } from '@mkt/kit';
import type { CrmParts } from './composition';
import type { CrmConfig } from './config';
import { customersRouter } from './http/customers.router';

export interface AppDeps {
  config: Readonly<CrmConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness'>;
  parts: Pick<CrmParts, 'relationships'>;
}

/** Every `/customers` path needs a verified token. */
export function createApp({ config, runtime, parts }: AppDeps): Express {
  return createService({
    name: 'crm',
    log: runtime.log,
    readiness: runtime.readiness,
    routes: (app) => {
      app.use('/customers', authenticate(config.JWT_PUBLIC_KEY), customersRouter(parts.relationships));
    },
  });
}
