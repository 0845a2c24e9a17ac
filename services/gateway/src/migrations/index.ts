import type { Migration } from '@mkt/kit/db';
import { indexes } from './0001-indexes';

/** The gateway database's migrations, in order (services/gateway/README.md lists them). */
export const gatewayMigrations: Migration[] = [indexes];
