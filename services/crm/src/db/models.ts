import { Schema, type Connection, type Model } from 'mongoose';
import { pendingEventsField, tombstoneModel, type Tombstone } from '@mkt/kit/bus';
import type { BookingFact, KnownUser, Relationship } from '../domain/records';

const userSchema = new Schema<KnownUser>({ _id: String, referenceId: String, fullName: String, role: String }, { versionKey: false });
/**
 * The name of the users' index on `referenceId`: not the default `referenceId_1`, which the
 * relationships' unique index bears. A name of its own in the database, so a drop by name
 * (`0004-listing-indexes`'s `down`) can only ever reach this index, never the unique key.
 */
export const USER_REFERENCE_INDEX = 'user_reference';
/**
 * A user named by their USR reference (a relationship's create, a listing by someone else's key)
 * is found through it: the `$or` of id and reference otherwise scanned every user. Not unique: the
 * projection does not guarantee it, and a unique build would fail on a duplicate.
 */
userSchema.index({ referenceId: 1 }, { name: USER_REFERENCE_INDEX });

/**
 * The relationships' listing indexes (0004-listing-indexes builds them on a database made
 * before): each the owner's key (one seller or one buyer, or none for an admin's `GET
 * /customers`), then the listing's sort ending in `_id` — unique, so a page boundary never repeats
 * or skips one. A listing reads through its own (hinted: `relationship.repository.ts`), walking
 * its page in order instead of sorting the owner's every relationship. A partial one holds only
 * the relationships its listing's filter can match (that filter requires the same condition).
 */
export const LISTING_INDEXES = {
  sellerCustomers: { key: { sellerId: 1, lastInteraction: -1, createdAt: -1, _id: -1 }, name: 'seller_customers' },
  sellerFollowers: {
    key: { sellerId: 1, followedAt: -1, _id: -1 },
    name: 'seller_followers',
    partialFilterExpression: { isFollower: true },
  },
  sellerFavorites: {
    key: { sellerId: 1, markedFavoriteAt: -1, _id: -1 },
    name: 'seller_favorites',
    partialFilterExpression: { isFavorite: true },
  },
  sellerHighValue: { key: { sellerId: 1, lifetimeValueMinor: -1, _id: -1 }, name: 'seller_high_value' },
  sellerNewest: { key: { sellerId: 1, createdAt: -1, _id: -1 }, name: 'seller_newest' },
  buyerNewest: { key: { buyerId: 1, createdAt: -1, _id: -1 }, name: 'buyer_newest' },
  buyerFollowing: {
    key: { buyerId: 1, followedAt: -1, _id: -1 },
    name: 'buyer_following',
    partialFilterExpression: { isFollower: true },
  },
  buyerCustomers: {
    key: { buyerId: 1, lastBooking: -1, _id: -1 },
    name: 'buyer_customers',
    partialFilterExpression: { totalBookings: { $gt: 0 } },
  },
  newest: { key: { createdAt: -1, _id: -1 }, name: 'newest' },
} as const;

const relationshipSchema = new Schema<Relationship>(
  {
    _id: String,
    referenceId: { type: String, required: true, unique: true },
    sellerId: { type: String, required: true },
    buyerId: { type: String, required: true, index: true },
    status: { type: String, default: 'Active' },
    customerType: { type: String, default: 'New' },
    isFollower: { type: Boolean, default: false },
    followStatus: { type: String, default: 'NotFollowing' },
    notificationPreference: { type: String, default: 'All' },
    notes: { type: String, default: '' },
    tags: { type: [String], default: [] },
    isFavorite: { type: Boolean, default: false },
    followedAt: { type: Date, default: null },
    markedFavoriteAt: { type: Date, default: null },
    sellerCategory: { type: String, default: null },
    totalBookings: { type: Number, default: 0 },
    totalSpentMinor: { type: Number, default: 0 },
    lifetimeValueMinor: { type: Number, default: 0 },
    lastInteraction: { type: Date, default: null },
    lastBooking: { type: Date, default: null },
    /** The outbox: an admin's change's audit entry, until it is published. */
    pendingEvents: pendingEventsField,
  },
  { timestamps: true, versionKey: false },
);
relationshipSchema.index({ sellerId: 1, buyerId: 1 }, { unique: true });
for (const { key, ...options } of Object.values(LISTING_INDEXES)) relationshipSchema.index(key, options);

/** One per booking id (domain/projection.ts): what its events said, merged. */
const bookingFactSchema = new Schema<BookingFact>(
  {
    _id: String,
    sellerId: { type: String, required: true },
    buyerId: { type: String, required: true },
    totalMinor: { type: Number, default: null },
    refundMinor: { type: Number, default: null },
    refundedMinor: { type: Number, default: null },
    refundedAt: { type: Date, default: null },
    confirmedAt: { type: Date, default: null },
    cancelledAt: { type: Date, default: null },
  },
  { versionKey: false },
).index({ sellerId: 1, buyerId: 1 });

export interface CrmModels {
  users: Model<KnownUser>;
  relationships: Model<Relationship>;
  bookingFacts: Model<BookingFact>;
  /** The relationships' deletes (`RecordDeletes`): an admin's delete's audit entry, until it is published. */
  deletions: Model<Tombstone>;
}

/** The CRM's models, bound to the connection `db` (nothing global to the process). */
export function crmModels(db: Connection): CrmModels {
  return {
    users: db.model<KnownUser>('KnownUser', userSchema, 'users'),
    relationships: db.model<Relationship>('Relationship', relationshipSchema, 'relationships'),
    bookingFacts: db.model<BookingFact>('BookingFact', bookingFactSchema, 'booking_facts'),
    deletions: tombstoneModel(db),
  };
}

/** Every model, for building their indexes at start. */
export const allModels = (models: CrmModels) => [models.users, models.relationships, models.bookingFacts, models.deletions];
