import { indexesMigration } from '@mkt/kit/db';

/**
 * The relationships' outbox sweep index (an admin's change of a relationship carries its audit
 * entry in `pendingEvents`), on a database made before relationships had an outbox. Building an
 * index that exists already changes nothing.
 */
export const outboxIndex = indexesMigration('0002-outbox-index');
