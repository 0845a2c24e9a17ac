import { indexBuildMigration, type IndexSpec } from '@mkt/kit/db';

const PUBLIC_ONLY = { isDraft: false, visibility: 'Public' } as const;

/**
 * The listings' indexes as this release's model declares them (a database made by this release
 * gets them from `0001-indexes`, one made before from this): the public listing's partial
 * indexes, one per order, by category or not, and a seller's products in their listing's order.
 */
const ON_PRODUCTS: Omit<IndexSpec, 'collection'>[] = [
  { key: { createdAt: -1, _id: -1 }, name: 'public_newest', partialFilterExpression: PUBLIC_ONLY },
  { key: { sellingPriceMinor: 1, createdAt: -1, _id: -1 }, name: 'public_price_asc', partialFilterExpression: PUBLIC_ONLY },
  { key: { sellingPriceMinor: -1, createdAt: -1, _id: -1 }, name: 'public_price_desc', partialFilterExpression: PUBLIC_ONLY },
  { key: { categoryId: 1, createdAt: -1, _id: -1 }, name: 'public_category_newest', partialFilterExpression: PUBLIC_ONLY },
  {
    key: { categoryId: 1, sellingPriceMinor: 1, createdAt: -1, _id: -1 },
    name: 'public_category_price_asc',
    partialFilterExpression: PUBLIC_ONLY,
  },
  {
    key: { categoryId: 1, sellingPriceMinor: -1, createdAt: -1, _id: -1 },
    name: 'public_category_price_desc',
    partialFilterExpression: PUBLIC_ONLY,
  },
  { key: { sellerId: 1, createdAt: -1, _id: -1 }, name: 'seller_newest' },
];
const LISTING_INDEXES: IndexSpec[] = ON_PRODUCTS.map((index) => ({ collection: 'seller_products', ...index }));

/**
 * The public listing sorted every public product in memory on each request for a price order,
 * and walked them all for one category; a seller's listing fetched all of the seller's products
 * to sort them. Through these indexes (keyed in each read's order) a read walks its page and
 * stops. Building an index that exists changes nothing: a run again after a crash is safe. The
 * indexes the previous release reads by stay (`isDraft_1_visibility_1_createdAt_-1`,
 * `sellerId_1`): it may still serve beside this one.
 *
 * Reversible: `down` drops these indexes (the previous release neither reads nor names them).
 */
export const listingIndexes = indexBuildMigration('0004-listing-indexes', LISTING_INDEXES);
