import { Schema, type Connection, type Model } from 'mongoose';
import { pendingEventsField, tombstoneModel, type Tombstone } from '@mkt/kit/bus';
import type { BookingFact, KnownUser, Relationship } from '../domain/records';

const userSchema = new Schema<KnownUser>({ _id: String, referenceId: String, fullName: String, role: String }, { versionKey: false });

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
