import { indexesMigration } from '@mkt/kit/db';

/**
 * The indexes the statement, the histories and the earnings read by (the ledger by wallet and
 * place, by type and by date; top-ups, payouts and transfers by owner and date; a seller's open
 * holds) and the ledger's unique place key, on a database whose first indexes were built before
 * them. A new database has them from 0001 already: building a declared index again is a no-op.
 * Not undone: the statement's reads need them.
 */
export const statementIndexes = indexesMigration('0003-statement-indexes');
