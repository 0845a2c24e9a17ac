import { indexesMigration } from '@mkt/kit/db';

/**
 * The products' tombstones (`deletions`: each delete's claim, and an admin's delete's audit entry
 * until it is published): their sweep index and outbox index. Building an index that exists
 * already changes nothing.
 */
export const deletions = indexesMigration('0003-deletions');
