import {
  BuyerFollowingResponse,
  BuyerRelationshipsResponse,
  BuyerSellersResponse,
  HighValueCustomersResponse,
  minorToMajor,
  OwnRelationshipsResponse,
  type PaginationResponse,
  type RelationshipResponse,
  RelationshipCreatedResponse,
  RelationshipUpdatedResponse,
  SellerCustomersResponse,
  SellerFavoritesResponse,
  SellerFollowersResponse,
} from '@mkt/contracts/crm';
import type { AuthenticatedUser } from '@mkt/kit/http';
import type { z } from 'zod';
import type { RelationshipRow } from '../application/relationships.use-cases';
import type { Relationship } from '../domain/records';
import { seesSellerNotes } from '../domain/relationships';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/**
 * The relationship as `viewer` may read it: the seller's own notes and tags about a buyer are
 * the seller's (and an admin's); the buyer reads them blank. Typed by the whole relationship's
 * response schema, which every other answer's fields are picked from.
 */
export function relationshipView({ doc, buyerName, sellerName }: RelationshipRow, viewer?: AuthenticatedUser): RelationshipView {
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
    createdAt: doc.createdAt.toISOString(),
    updatedAt: doc.updatedAt.toISOString(),
  };
}
export type RelationshipView = z.input<typeof RelationshipResponse>;

/** A documented (strict) response object whose fields are fields of the whole relationship. */
type RowSchema = z.ZodObject<{ [K in keyof RelationshipView]?: z.ZodType }>;

/** The fields a documented (strict) response row holds, read off its schema: one list, not two. */
export function fieldsOf<S extends RowSchema>(schema: S): (view: RelationshipView) => z.input<S> {
  const keys = Object.keys(schema.shape) as Array<keyof RelationshipView>;
  return (view) => Object.fromEntries(keys.map((key) => [key, view[key]])) as z.input<S>;
}

/** What a create and an update answer (names are not read for them). */
export const createdView = (doc: Relationship) =>
  fieldsOf(RelationshipCreatedResponse)(relationshipView({ doc, buyerName: null, sellerName: null }));
export const updatedView = (doc: Relationship) =>
  fieldsOf(RelationshipUpdatedResponse)(relationshipView({ doc, buyerName: null, sellerName: null }));
export const ownListRow = fieldsOf(OwnRelationshipsResponse.shape.customers.element);

/** A listing response: `{ [key]: rows, total, pagination }`, its rows a documented row schema. */
type ListingSchema = z.ZodObject<{ total: z.ZodType; pagination: z.ZodType } & Record<string, z.ZodType>>;

/**
 * A listing's answer, shaped by its response schema: the rows under the schema's one key
 * beside `total` and `pagination`, each row the fields its schema names.
 */
export function listingView<S extends ListingSchema>(
  schema: S,
  rows: RelationshipView[],
  total: number,
  pagination: z.input<typeof PaginationResponse>,
): z.input<S> {
  const [key] = Object.keys(schema.shape).filter((name) => name !== 'total' && name !== 'pagination');
  const row = fieldsOf((schema.shape[key!] as unknown as { element: RowSchema }).element);
  return { [key!]: rows.map(row), total, pagination } as z.input<S>;
}

/** Each listing's response schema in `@mkt/contracts`. */
export const LISTING_SCHEMAS = {
  customers: SellerCustomersResponse,
  followers: SellerFollowersResponse,
  favorites: SellerFavoritesResponse,
  'high-value': HighValueCustomersResponse,
  relationships: BuyerRelationshipsResponse,
  following: BuyerFollowingResponse,
  'buyer-customers': BuyerSellersResponse,
} as const;
