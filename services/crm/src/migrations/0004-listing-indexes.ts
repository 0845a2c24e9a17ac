import { indexBuildMigration, type IndexSpec } from '@mkt/kit/db';

/**
 * The indexes this migration builds, by collection (the models declare the same; a database made
 * by this release gets them from `0001-indexes`, one made before from this). Written out here, not
 * read from the models: what ran is what this file says.
 */
const INDEXES = {
  users: [{ key: { referenceId: 1 }, name: 'user_reference' }],
  relationships: [
    { key: { sellerId: 1, lastInteraction: -1, createdAt: -1, _id: -1 }, name: 'seller_customers' },
    { key: { sellerId: 1, followedAt: -1, _id: -1 }, name: 'seller_followers', partialFilterExpression: { isFollower: true } },
    { key: { sellerId: 1, markedFavoriteAt: -1, _id: -1 }, name: 'seller_favorites', partialFilterExpression: { isFavorite: true } },
    { key: { sellerId: 1, lifetimeValueMinor: -1, _id: -1 }, name: 'seller_high_value' },
    { key: { sellerId: 1, createdAt: -1, _id: -1 }, name: 'seller_newest' },
    { key: { buyerId: 1, createdAt: -1, _id: -1 }, name: 'buyer_newest' },
    { key: { buyerId: 1, followedAt: -1, _id: -1 }, name: 'buyer_following', partialFilterExpression: { isFollower: true } },
    { key: { buyerId: 1, lastBooking: -1, _id: -1 }, name: 'buyer_customers', partialFilterExpression: { totalBookings: { $gt: 0 } } },
    { key: { createdAt: -1, _id: -1 }, name: 'newest' },
  ],
} as const;

/**
 * A user named by reference was found by a scan of every user (the `$or` of id and reference had
 * no index on `referenceId`), and each relationship listing fetched its owner's every relationship
 * (an admin's `GET /customers` every one) and sorted them for one page. Through these indexes a
 * user is one index read, and a listing walks its page in its sort's order (the listings hint
 * them: this migration must have run, as every migration before a release's processes start).
 * Building an index that exists changes nothing: a run again after a crash is safe. No index is
 * dropped: a process of the previous release may still read through `buyerId_1`.
 *
 * Reversible: `down` drops the indexes it built (the previous release neither reads nor names them).
 */
export const listingIndexes = indexBuildMigration(
  '0004-listing-indexes',
  Object.entries(INDEXES).flatMap(([collection, indexes]): IndexSpec[] => indexes.map((index) => ({ collection, ...index }))),
);
