import type { Migration } from '@mkt/kit';
import { indexes } from './0001-indexes';

/** The crm database's migrations, in order (services/crm/README.md lists them). */
export const crmMigrations: Migration[] = [indexes];
