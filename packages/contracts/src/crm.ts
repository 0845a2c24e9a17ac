import { z } from 'zod';
import { AT_LEAST_ONE_FIELD, NON_BLANK } from './schema-meta';
import { PageQuery } from './pagination';
import { NonNegativeMoneyParam, withMinorNames } from './money';

export const RelationshipStatus = z.enum(['Active', 'Inactive', 'Blocked']).meta({ id: 'RelationshipStatus' });
export const CustomerType = z.enum(['New', 'Regular', 'VIP']).meta({ id: 'CustomerType' });
export const FollowStatus = z.enum(['Following', 'NotFollowing']).meta({ id: 'FollowStatus' });
export const NotificationPreference = z.enum(['All', 'Important', 'None']).meta({ id: 'NotificationPreference' });

const Tags = z.array(z.string().trim().min(1).max(40).meta(NON_BLANK)).max(30);
const UserId = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .meta({ ...NON_BLANK, description: 'A user: their id (a uuid) or their USR reference (MKT-USR-…).' });

const editable = {
  status: RelationshipStatus,
  customerType: CustomerType,
  isFollower: z.boolean(),
  followStatus: FollowStatus,
  notificationPreference: NotificationPreference,
  notes: z.string().trim().max(5000),
  tags: Tags,
  isFavorite: z.boolean(),
};

/** Totals (totalBookings, totalSpent, lifetimeValue, lastInteraction) are never accepted: strict. */
export const CreateCustomerBody = z
  .object({
    sellerId: UserId,
    buyerId: UserId,
    status: RelationshipStatus.default('Active'),
    customerType: CustomerType.default('New'),
    isFollower: z.boolean().default(false),
    followStatus: FollowStatus.optional(),
    notificationPreference: NotificationPreference.default('All'),
    notes: z.string().trim().max(5000).default(''),
    tags: Tags.default([]),
    isFavorite: z.boolean().default(false),
  })
  .strict()
  .meta({ id: 'CreateCustomerBody' });
export type CreateCustomerBody = z.infer<typeof CreateCustomerBody>;

export const UpdateCustomerBody = z
  .object(editable)
  .partial()
  .strict()
  .refine((body) => Object.keys(body).length > 0, 'Send at least one field')
  .meta({ ...AT_LEAST_ONE_FIELD, id: 'UpdateCustomerBody' });
export type UpdateCustomerBody = z.infer<typeof UpdateCustomerBody>;

export const CustomerParams = z
  .object({
    id: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .meta({ ...NON_BLANK, description: 'The relationship: its id (cus_…) or its referenceId (CUS_…).' }),
  })
  .strict();
export const SellerParams = z.object({ sellerId: UserId }).strict();
export const BuyerParams = z.object({ buyerId: UserId }).strict();
export const CustomerListQuery = PageQuery.extend({
  status: RelationshipStatus.optional(),
  customerType: CustomerType.optional(),
}).strict();
export const RelationListQuery = PageQuery.strict();
export const HighValueQuery = PageQuery.extend({ minLifetimeValue: NonNegativeMoneyParam.default(0) })
  .strict()
  .transform(withMinorNames(['minLifetimeValue']));
