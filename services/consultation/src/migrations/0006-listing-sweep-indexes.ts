import { indexBuildMigration, type IndexSpec } from '@mkt/kit/db';

/**
 * The indexes of the listings and the session sweep (the models declare the same; a database made
 * by this release gets them from `0001-indexes`, one made before from this).
 */
const BUILT: IndexSpec[] = [
  { collection: 'bookings', key: { buyerId: 1, startsAt: -1, _id: -1 }, name: 'buyerId_1_startsAt_-1__id_-1' },
  { collection: 'bookings', key: { sellerId: 1, startsAt: -1, _id: -1 }, name: 'sellerId_1_startsAt_-1__id_-1' },
  { collection: 'bookings', key: { status: 1, startsAt: -1, _id: -1 }, name: 'status_1_startsAt_-1__id_-1' },
  { collection: 'bookings', key: { sessionId: 1, status: 1 }, name: 'sessionId_1_status_1' },
  {
    collection: 'bookings',
    key: { couponId: 1, status: 1 },
    name: 'couponId_1_status_1',
    partialFilterExpression: { couponId: { $gt: '' } },
  },
  { collection: 'sessions', key: { status: 1, endsAt: 1 }, name: 'status_1_endsAt_1' },
  { collection: 'sessions', key: { expiryFinished: 1 }, name: 'expired_by_finished', partialFilterExpression: { status: 'Expired' } },
  { collection: 'sessions', key: { sellerId: 1, startsAt: -1, _id: -1 }, name: 'sellerId_1_startsAt_-1__id_-1' },
  { collection: 'sessions', key: { buyerIds: 1, startsAt: -1, _id: -1 }, name: 'buyerIds_1_startsAt_-1__id_-1' },
  { collection: 'sessions', key: { status: 1, startsAt: -1, _id: -1 }, name: 'status_1_startsAt_-1__id_-1' },
  { collection: 'sessions', key: { startsAt: -1, _id: -1 }, name: 'startsAt_-1__id_-1' },
];

/** The single-field indexes the previous release declared, each the first key of one built above. */
const REPLACED: IndexSpec[] = [
  { collection: 'bookings', key: { buyerId: 1 }, name: 'buyerId_1' },
  { collection: 'bookings', key: { sellerId: 1 }, name: 'sellerId_1' },
  { collection: 'bookings', key: { status: 1 }, name: 'status_1' },
  { collection: 'sessions', key: { sellerId: 1 }, name: 'sellerId_1' },
];

/**
 * The listings (`GET /consultations/bookings`, `GET /consultations/sessions`) sorted every booking
 * or session of the user (every one, for an admin) in memory for each page, and the session sweep
 * read every session of a status (every 60 s) to find the overdue ones; a session's Confirmed
 * bookings (its moves and expiry) and a coupon's uses (every booking with a coupon) were read by
 * walking every booking of the status: their cost grew with the history. Through these indexes the server reads a page in order and stops at it, and the sweep
 * reads only the sessions it ends or resumes. The single-field indexes they start with are dropped
 * after they are built (never a moment without an index of those keys): the new ones serve every
 * read those served. Building an index that exists, or dropping one that is gone, changes nothing:
 * a run again after a crash is safe.
 *
 * Reversible: `down` builds the single-field indexes again, then drops these (the previous release
 * neither reads nor names them).
 */
export const listingSweepIndexes = indexBuildMigration('0006-listing-sweep-indexes', BUILT, REPLACED);
