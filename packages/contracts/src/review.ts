import { z } from 'zod';
import { NON_BLANK } from './schema-meta';
import { PageQuery } from './pagination';

/** Other entity types are refused until they exist. */
export const ReviewEntityType = z.enum(['consultation_service']).meta({ id: 'ReviewEntityType' });
export type ReviewEntityType = z.infer<typeof ReviewEntityType>;

export const CreateReviewBody = z
  .object({
    entityType: ReviewEntityType,
    entityId: z.string().trim().min(1).max(64).meta(NON_BLANK),
    rating: z.number().int('A rating is a whole number').min(1).max(5),
    /** Plain text, stored and returned as written (surrounding whitespace trimmed); clients escape it. */
    comment: z.string().trim().max(2000).default(''),
  })
  .strict()
  .meta({ id: 'CreateReviewBody' });
export type CreateReviewBody = z.infer<typeof CreateReviewBody>;

export const ReviewsByEntityQuery = PageQuery.extend({
  entityType: ReviewEntityType,
  entityId: z.string().trim().min(1).max(64).meta(NON_BLANK),
}).strict();
export const ReviewParams = z
  .object({
    id: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .meta({
        ...NON_BLANK,
        description:
          'An id or a referenceId: of the review (rev_… or REV_…) on /reviews/{id}, of the consultation (con_… or MKT-CON-…) on its status.',
      }),
  })
  .strict();
export const UpdateReviewBody = z.object({ isActive: z.boolean() }).strict().meta({ id: 'UpdateReviewBody' });
