import {
  BuyerFollowingResponse,
  BuyerRelationshipsResponse,
  BuyerSellersResponse,
  HighValueCustomersResponse,
  minorToMajor,
  OwnRelationshipsResponse,
  RelationshipCreatedResponse,
  RelationshipUpdatedResponse,
  SellerCustomersResponse,
  SellerFavoritesResponse,
  SellerFollowersResponse,
} from '@mkt/contracts';
import type { AuthenticatedUser } from '@mkt/kit';
import type { RelationshipRow } from '../application/relationships';
import type { Relationship } from '../domain/relationships';
import { seesSellerNotes } from '../domain/relationships';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/**
 * The relationship as `viewer` may read it: the seller's own notes and tags about a buyer are
 * the seller's (and an admin's); the buyer reads them blank.
 */
export function relationshipView({ doc, buyerName, sellerName }: RelationshipRow, viewer?: AuthenticatedUser) {
  const sellerSide = seesSellerNotes(viewer, doc);
  return {
    id: doc._id,
    referenceId: doc.referenceId,
    sellerId: doc.sellerId,
    buyerId: doc.buyerId,
    buyerName,
    sellerName,
    sellerCategory: doc.sellerCategory,
    status: doc.status,
    customerType: doc.customerType,
    isFollower: doc.isFollower,
    isFollowing: doc.isFollower,
    followStatus: doc.followStatus,
    notificationPreference: doc.notificationPreference,
    notes: sellerSide ? doc.notes : '',
    tags: sellerSide ? doc.tags : [],
    isFavorite: doc.isFavorite,
    followedAt: iso(doc.followedAt),
    markedFavoriteAt: iso(doc.markedFavoriteAt),
    totalBookings: doc.totalBookings,
    totalSpent: minorToMajor(doc.totalSpentMinor),
    lifetimeValue: minorToMajor(doc.lifetimeValueMinor),
    lastInteraction: iso(doc.lastInteraction),
    lastBooking: iso(doc.lastBooking),
    createdAt: iso(doc.createdAt),
    updatedAt: iso(doc.updatedAt),
  };
}
export type RelationshipView = ReturnType<typeof relationshipView>;

type Row = (view: RelationshipView) => Partial<RelationshipView>;

/** The fields a documented (strict) response row holds, read off its schema: one list, not two. */
export function fieldsOf(schema: { shape: object }): Row {
  const keys = Object.keys(schema.shape) as Array<keyof RelationshipView>;
  return (view) => Object.fromEntries(keys.map((key) => [key, view[key]]));
}

/** What a create and an update answer (names are not read for them). */
export const createdView = (doc: Relationship) =>
  fieldsOf(RelationshipCreatedResponse)(relationshipView({ doc, buyerName: null, sellerName: null }));
export const updatedView = (doc: Relationship) =>
  fieldsOf(RelationshipUpdatedResponse)(relationshipView({ doc, buyerName: null, sellerName: null }));
export const ownListRow = fieldsOf(OwnRelationshipsResponse.shape.customers.element);

/** A listing response: `{ [key]: rows, total, pagination }`. */
type ListingSchema = { shape: Record<string, unknown> & { total: unknown; pagination: unknown } };

/** The key of a listing's rows and the fields of a row, read off the listing's response schema. */
function listingOf(schema: ListingSchema): { key: string; row: Row } {
  const [key] = Object.keys(schema.shape).filter((name) => name !== 'total' && name !== 'pagination');
  return { key: key!, row: fieldsOf((schema.shape[key!] as { element: { shape: object } }).element) };
}

/** Each listing's response, by its documented schema in `@mkt/contracts`. */
export const LISTING_VIEWS = {
  customers: listingOf(SellerCustomersResponse),
  followers: listingOf(SellerFollowersResponse),
  favorites: listingOf(SellerFavoritesResponse),
  'high-value': listingOf(HighValueCustomersResponse),
  relationships: listingOf(BuyerRelationshipsResponse),
  following: listingOf(BuyerFollowingResponse),
  'buyer-customers': listingOf(BuyerSellersResponse),
} as const;
