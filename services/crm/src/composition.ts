import type { Logger, RunOptions } from '@mkt/kit';
import { createApp } from './app';
import type { CrmConfig } from './config';
import { BookingFact, KnownUser, Relationship } from './db/crm.models';
import { bookingsConsumer, usersConsumer } from './events/consumers';

/** How the CRM is put together (main.ts and the component tests). */
export function crmService(config: Readonly<CrmConfig>, log: Logger): RunOptions {
  return {
    name: 'crm',
    config,
    log,
    models: [KnownUser, Relationship, BookingFact],
    consumers: [usersConsumer, bookingsConsumer],
    createApp: (runtime) => createApp({ config, runtime }),
  };
}
