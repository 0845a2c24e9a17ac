import { indexBuildMigration } from '@mkt/kit/db';

/**
 * The partial index of the PaymentPending bookings in the sweep's turn (the model declares the
 * same; a database made by this release gets it from `0001-indexes`, one made before from this).
 */
const WAITING_INDEX = {
  collection: 'bookings',
  key: { paymentTriedAt: 1, updatedAt: 1, _id: 1 },
  name: 'payment_pending_turn',
  partialFilterExpression: { status: 'PaymentPending' },
} as const;

/**
 * The sweep reads the PaymentPending bookings least recently asked first, at most 100 a sweep.
 * Without an index in that order, the server fetched every booking waiting for the wallet and
 * sorted them on each sweep (every 10 s), thousands while the wallet is away; through this index
 * (only those bookings, keyed in the sort's order) it reads them in order and stops at its limit.
 * Building an index that exists changes nothing: a run again after a crash is safe.
 *
 * Reversible: `down` drops the index (the previous release neither reads nor names it).
 */
export const waitingTurnIndex = indexBuildMigration('0005-waiting-turn-index', [WAITING_INDEX]);
