import type { Migration } from '@mkt/kit/db';
import { indexes } from './0001-indexes';
import { outboxIndex } from './0002-outbox-index';
import { deletions } from './0003-deletions';
import { listingIndexes } from './0004-listing-indexes';

/** The crm database's migrations, in order (services/crm/README.md lists them). */
export const crmMigrations: Migration[] = [indexes, outboxIndex, deletions, listingIndexes];
