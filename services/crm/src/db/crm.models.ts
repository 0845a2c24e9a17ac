import mongoose, { Schema } from 'mongoose';

/** Users as `identity.user.registered` told us: names for the listings, no call to the gateway. */
export interface UserDoc {
  _id: string;
  referenceId: string;
  fullName: string;
  role: string;
}
export const KnownUser = mongoose.model<UserDoc>(
  'KnownUser',
  new Schema<UserDoc>({ _id: String, referenceId: String, fullName: String, role: String }, { versionKey: false }),
  'users',
);

export interface RelationshipDoc {
  _id: string;
  referenceId: string;
  sellerId: string;
  buyerId: string;
  status: string;
  customerType: string;
  isFollower: boolean;
  followStatus: string;
  notificationPreference: string;
  notes: string;
  tags: string[];
  isFavorite: boolean;
  followedAt: Date | null;
  markedFavoriteAt: Date | null;
  sellerCategory: string | null;
  totalBookings: number;
  totalSpentMinor: number;
  lifetimeValueMinor: number;
  lastInteraction: Date | null;
  lastBooking: Date | null;
  createdAt: Date;
  updatedAt: Date;
}
const relationshipSchema = new Schema<RelationshipDoc>(
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
  },
  { timestamps: true, versionKey: false },
);
relationshipSchema.index({ sellerId: 1, buyerId: 1 }, { unique: true });
export const Relationship = mongoose.model<RelationshipDoc>('Relationship', relationshipSchema, 'relationships');

/**
 * What the booking events said about one booking, merged whatever their order: the confirm
 * brings the amount, the cancel the refund. Totals are recomputed from these, so a repeated
 * or late event cannot count twice — and the projection can be rebuilt from them.
 */
export interface BookingFactDoc {
  _id: string;
  sellerId: string;
  buyerId: string;
  totalMinor: number | null;
  refundMinor: number | null;
  /** What the wallet actually gave back (wallet.booking_refund.completed): the refund that counts. */
  refundedMinor: number | null;
  refundedAt: Date | null;
  confirmedAt: Date | null;
  cancelledAt: Date | null;
}
export const BookingFact = mongoose.model<BookingFactDoc>(
  'BookingFact',
  new Schema<BookingFactDoc>(
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
  ).index({ sellerId: 1, buyerId: 1 }),
  'booking_facts',
);
