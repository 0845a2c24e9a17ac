import { z } from 'zod';
import { CustomerType, FollowStatus, NotificationPreference, RelationshipStatus } from '../crm';
import { Count, InternalId, Major, NullableTimestamp, PaginationResponse, Text, Timestamp, UnderscoreRef, UserId } from './common';

const Name = (example: string) => Text(example).nullable();

/** Every field of a relationship; each response below shows the ones it names. */
const relationship = {
  id: InternalId('cus'),
  referenceId: UnderscoreRef('CUS'),
  sellerId: UserId,
  buyerId: UserId,
  buyerName: Name('Sara Tesfaye'),
  sellerName: Name('Abebe Kebede'),
  sellerCategory: Name('Business'),
  status: RelationshipStatus,
  customerType: CustomerType,
  isFollower: z.boolean(),
  isFollowing: z.boolean(),
  followStatus: FollowStatus,
  notificationPreference: NotificationPreference,
  notes: Text('Prefers mornings'),
  tags: z.array(Text('coffee')),
  isFavorite: z.boolean(),
  followedAt: NullableTimestamp,
  markedFavoriteAt: NullableTimestamp,
  totalBookings: Count(3),
  totalSpent: Major(2250),
  lifetimeValue: Major(2250),
  lastInteraction: NullableTimestamp,
  lastBooking: NullableTimestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp,
};
type Field = keyof typeof relationship;
const only = <K extends Field>(...keys: K[]) =>
  z.strictObject(Object.fromEntries(keys.map((key) => [key, relationship[key]])) as Pick<typeof relationship, K>);

export const RelationshipResponse = z.strictObject(relationship).meta({ id: 'Relationship' });
export const RelationshipCreatedResponse = only(
  'id',
  'referenceId',
  'sellerId',
  'buyerId',
  'status',
  'customerType',
  'isFollower',
  'createdAt',
).meta({ id: 'RelationshipCreated' });
export const RelationshipUpdatedResponse = only(
  'id',
  'customerType',
  'status',
  'isFollower',
  'isFavorite',
  'notes',
  'tags',
  'followedAt',
  'markedFavoriteAt',
  'updatedAt',
).meta({ id: 'RelationshipUpdated' });
export const RelationshipDeletedResponse = z
  .strictObject({ id: InternalId('cus'), deleted: z.literal(true) })
  .meta({ id: 'RelationshipDeleted' });

export const OwnRelationshipsResponse = z
  .strictObject({
    customers: z.array(
      only(
        'id',
        'referenceId',
        'sellerId',
        'buyerId',
        'buyerName',
        'sellerName',
        'customerType',
        'status',
        'totalBookings',
        'totalSpent',
        'lastInteraction',
      ),
    ),
    pagination: PaginationResponse,
  })
  .meta({ id: 'OwnRelationships' });

/** A listing of one seller's or one buyer's relationships under `key`, with the total. */
const listing = <K extends string, S extends z.ZodType>(key: K, row: S) =>
  z.strictObject({ [key]: z.array(row), total: Count(1), pagination: PaginationResponse } as Record<K, z.ZodArray<S>> & {
    total: z.ZodNumber;
    pagination: typeof PaginationResponse;
  });

export const SellerCustomersResponse = listing(
  'customers',
  only('id', 'buyerId', 'buyerName', 'customerType', 'totalBookings', 'totalSpent', 'isFollower'),
).meta({ id: 'SellerCustomers' });
export const SellerFollowersResponse = listing('followers', only('id', 'buyerId', 'buyerName', 'followedAt', 'totalBookings')).meta({
  id: 'SellerFollowers',
});
export const SellerFavoritesResponse = listing(
  'favorites',
  only('id', 'buyerId', 'buyerName', 'customerType', 'totalSpent', 'markedFavoriteAt'),
).meta({ id: 'SellerFavorites' });
export const HighValueCustomersResponse = listing(
  'customers',
  only('id', 'buyerId', 'buyerName', 'lifetimeValue', 'totalBookings', 'customerType'),
).meta({ id: 'HighValueCustomers' });
export const BuyerRelationshipsResponse = listing(
  'relationships',
  only('id', 'sellerId', 'sellerName', 'status', 'isFollowing', 'totalBookings', 'totalSpent'),
).meta({ id: 'BuyerRelationships' });
export const BuyerFollowingResponse = listing(
  'following',
  only('id', 'sellerId', 'sellerName', 'sellerCategory', 'followedAt', 'totalBookings'),
).meta({ id: 'BuyerFollowing' });
export const BuyerSellersResponse = listing(
  'customers',
  only('id', 'sellerId', 'sellerName', 'totalBookings', 'totalSpent', 'lastBooking'),
).meta({ id: 'BuyerSellers' });

export const SellerAnalyticsResponse = z
  .strictObject({
    totalCustomers: Count(12),
    activeCustomers: Count(10),
    followers: Count(4),
    totalRevenue: Major(9000),
    averageOrderValue: Major(750),
    /** Customers with at least 2 bookings over those with at least 1 (a fraction). */
    customerRetentionRate: z
      .number()
      .min(0)
      .max(1)
      .meta({ examples: [0.25] }),
  })
  .meta({ id: 'SellerAnalytics' });
