import type { Express } from 'express';
import { authenticate, createService, type Runtime } from '@mkt/kit';
import type { CrmConfig } from './config';
import { customersRouter } from './http/customers.router';

export interface AppDeps {
  config: Readonly<CrmConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness'>;
}

/** Every `/customers` path needs a verified token. */
export function createApp({ config, runtime }: AppDeps): Express {
  return createService({
    name: 'crm',
    log: runtime.log,
    readiness: runtime.readiness,
    routes: (app) => {
      app.use('/customers', authenticate(config.JWT_PUBLIC_KEY), customersRouter());
    },
  });
}
