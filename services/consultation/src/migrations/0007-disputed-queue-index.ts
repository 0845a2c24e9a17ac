import { indexBuildMigration } from '@mkt/kit/db';

/**
 * The index of an admin's disputed queue (the model declares the same; a database made by this
 * release gets it from `0001-indexes`, one made before from this): the disputed bookings only,
 * newest slot first, then the status. The queue (`GET /consultations/bookings?disputed=true` as an
 * admin) walked every booking of its statuses and skipped the undisputed. Building it again
 * changes nothing.
 *
 * Reversible: `down` drops it, with the previous release's processes only (they neither read nor
 * name it; this release's disputed queue hints it, and a hint to a missing index is refused).
 */
export const disputedQueueIndex = indexBuildMigration('0007-disputed-queue-index', [
  {
    collection: 'bookings',
    key: { startsAt: -1, _id: -1, status: 1 },
    name: 'disputed_by_startsAt',
    partialFilterExpression: { dispute: { $type: 'object' } },
  },
]);
