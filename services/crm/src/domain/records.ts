import type { CustomerType, FollowStatus, IntegrationEvent, NotificationPreference, RelationshipStatus } from '@mkt/contracts/crm';
import type { z } from 'zod';
import type { Fact } from './totals';

/**
 * The CRM's stored records as the domain and the repositories read them (what `db/models.ts`
 * stores). Plain types: the schemas are typed by them, the decisions take them in.
 */

/** Users as `identity.user.registered` told us: names for the listings, no call to the gateway. */
export interface KnownUser {
  _id: string;
  referenceId: string;
  fullName: string;
  role: string;
}

/** A seller–buyer customer relationship as stored (amounts in minor units). */
export interface Relationship {
  _id: string;
  referenceId: string;
  sellerId: string;
  buyerId: string;
  status: z.output<typeof RelationshipStatus>;
  customerType: z.output<typeof CustomerType>;
  isFollower: boolean;
  followStatus: z.output<typeof FollowStatus>;
  notificationPreference: z.output<typeof NotificationPreference>;
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
  /** The outbox (an admin's change's audit entry); absent on records no admin changed. */
  pendingEvents?: IntegrationEvent[];
  createdAt: Date;
  updatedAt: Date;
}

/** A seller and a buyer (user ids): one relationship each. */
export interface Pair {
  sellerId: string;
  buyerId: string;
}

/**
 * What the booking events said about one booking, merged whatever their order: the confirm
 * brings the amount, the cancel the refund asked, the wallet's refund what it gave back. Totals
 * are recomputed from these, so a repeated or late event cannot count twice — and the projection
 * can be rebuilt from them.
 */
export interface BookingFact extends Fact, Pair {
  _id: string;
  totalMinor: number | null;
  refundMinor: number | null;
  /** What the wallet actually gave back (wallet.booking_refund.completed): the refund that counts. */
  refundedMinor: number | null;
  refundedAt: Date | null;
  confirmedAt: Date | null;
  cancelledAt: Date | null;
}
