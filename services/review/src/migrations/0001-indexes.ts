import { indexesMigration } from '@mkt/kit/db';

/**
 * The indexes the service's models declare (unique keys above all) and the outbox sweep index,
 * built once before the first process of the release serves — not by each process at start.
 * Not undone: a database without its unique keys must never serve.
 */
export const indexes = indexesMigration('0001-indexes');
