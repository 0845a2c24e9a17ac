import { z } from 'zod';
import { AverageRating, Count, InternalId, PaginationResponse, Text, Timestamp, UnderscoreRef } from './common';

const Rating = z
  .number()
  .int()
  .min(1)
  .max(5)
  .meta({ examples: [5] });

export const ReviewCreatedResponse = z
  .strictObject({
    reviewId: InternalId('rev'),
    referenceId: UnderscoreRef('REV'),
    entityType: z.literal('consultation_service'),
    entityId: Text('con_k2j4h6g8f0d2s4a6'),
    rating: Rating,
    comment: Text('Clear and practical'),
    isActive: z.boolean(),
    createdAt: Timestamp,
  })
  .meta({ id: 'ReviewCreated' });

export const ReviewsByEntityResponse = z
  .strictObject({
    reviews: z.array(
      z.strictObject({
        id: InternalId('rev'),
        referenceId: UnderscoreRef('REV'),
        rating: Rating,
        comment: Text('Clear and practical'),
        reviewerName: Text('Sara Tesfaye'),
        /**
         * False for a review by a buyer who had only free places, or who paid of their own less than
         * the review service's minimum share of the list price (coupons and money the seller had
         * transferred to them are not theirs): listed, but not in the average or `totalReviews`.
         */
        countsInRating: z.boolean(),
        /** True once the wallet captured a booking of the reviewer's that they paid enough of with their own money. */
        verifiedPurchase: z.boolean(),
        createdAt: Timestamp,
      }),
    ),
    /** Over the active reviews that count in the rating, 2 decimals; 0 when there are none. */
    averageRating: AverageRating,
    /** The active reviews that count in the rating (`pagination.total`: all listed). */
    totalReviews: Count(2),
    pagination: PaginationResponse,
  })
  .meta({ id: 'ReviewsByEntity' });

export const ReviewStatusResponse = z
  .strictObject({
    canReview: z.boolean(),
    hasReviewed: z.boolean(),
    sessionCompleted: z.boolean(),
    consultationId: Text('con_k2j4h6g8f0d2s4a6'),
  })
  .meta({ id: 'ReviewStatus' });

export const ReviewUpdatedResponse = z
  .strictObject({
    reviewId: InternalId('rev'),
    referenceId: UnderscoreRef('REV'),
    isActive: z.boolean(),
    updatedAt: Timestamp,
  })
  .meta({ id: 'ReviewUpdated' });
