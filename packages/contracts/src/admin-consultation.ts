import { z } from 'zod';
import { PageQuery } from './pagination';
import { AuditSnapshot } from './admin-actions';
import { Count, PrefixedRef, Text, Timestamp, UserId } from './responses/common';

/** The consultation's admin queue: consultations and revisions waiting for approval. */

/** `consultation`: new or re-submitted consultations (Pending); `revision`: edits of approved ones. */
export const ApprovalQueueKind = z.enum(['consultation', 'revision']).meta({ id: 'ApprovalQueueKind' });

export const ApprovalQueueQuery = PageQuery.extend({
  kind: ApprovalQueueKind.optional(),
  sellerId: z.uuid().optional(),
}).strict();
export type ApprovalQueueQuery = z.infer<typeof ApprovalQueueQuery>;

export const ApprovalQueueResponse = z
  .strictObject({
    counts: z.strictObject({ consultations: Count(2), revisions: Count(1) }),
    items: z.array(
      z.strictObject({
        kind: ApprovalQueueKind,
        consultationId: Text('con_k2j4h6g8f0d2s4a6'),
        referenceId: PrefixedRef('CON'),
        sellerId: UserId,
        title: Text('Business plan review'),
        /** What an approval names (`version` of `POST /consultations/{id}/approve`). */
        version: Count(2),
        /** A revision's id (`revisionId` of the approval); null for a consultation. */
        revisionId: z
          .uuid()
          .nullable()
          .meta({ examples: [null] }),
        /** A revision's proposed changes; null for a consultation. */
        changes: AuditSnapshot.nullable().meta({ examples: [null] }),
        /** When it began to wait: the revision's submission, or the consultation's last change. */
        waitingSince: Timestamp,
      }),
    ),
  })
  .meta({ id: 'ApprovalQueue' });
