import { indexesMigration } from '@mkt/kit/db';

/**
 * The products' outbox sweep index (an admin's change of a seller's product carries its audit
 * entry in `pendingEvents`), on a database made before products had an outbox. Building an index
 * that exists already changes nothing.
 */
export const outboxIndex = indexesMigration('0002-outbox-index');
