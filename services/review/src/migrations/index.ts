import type { Migration } from '@mkt/kit/db';
import { indexes } from './0001-indexes';
import { consultationReferenceIndex } from './0002-consultation-reference-index';

/** The review database's migrations, in order (services/review/README.md lists them). */
export const reviewMigrations: Migration[] = [indexes, consultationReferenceIndex];
