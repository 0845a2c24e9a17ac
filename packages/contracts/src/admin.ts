import { z } from 'zod';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from './pagination';
import { AuditAction, AuditSnapshot, AuditTargetType } from './admin-actions';
import { Text, Timestamp, UserId, UserRole } from './responses/common';

/**
 * The admins' work: the audit log of what they did (the gateway's); the queues of what waits for
 * them are their services' (admin-wallet.ts: payouts, holds overdue or disputed;
 * admin-consultation.ts: approvals), the entry of an action admin-actions.ts. An admin action's entry travels as
 * an event (`<service>.admin_action.recorded`: wallet, consultation, review, catalog, crm) written in the
 * same conditional update as the action (the outbox), and the gateway keeps the append-only log.
 */

// ---------------------------------------------------------------------------------------------
// The audit log

const IsoQueryTime = z.iso.datetime({ offset: true });

/** The filters of the audit log and its export. */
export const AuditFilterQuery = z
  .object({
    actorId: z.uuid().optional(),
    action: AuditAction.optional(),
    targetType: AuditTargetType.optional(),
    targetId: z.string().trim().min(1).max(120).optional(),
    /** Entries at or after this time. */
    from: IsoQueryTime.optional(),
    /** Entries before this time. */
    to: IsoQueryTime.optional(),
  })
  .strict();
export type AuditFilterQuery = z.infer<typeof AuditFilterQuery>;

export const AuditLogQuery = AuditFilterQuery.extend({
  /** The `nextCursor` of the previous page (newest first). */
  cursor: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,200}$/)
    .optional(),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT).default(DEFAULT_PAGE_LIMIT),
}).strict();
export type AuditLogQuery = z.infer<typeof AuditLogQuery>;

export const AuditEntryResponse = z
  .strictObject({
    id: z.uuid().meta({ examples: ['3f1c2a7e-8d4b-4c1e-9a2f-5b6c7d8e9f01'] }),
    action: Text('payout.approve'),
    actorId: UserId,
    actorRole: UserRole,
    targetType: Text('payout'),
    targetId: Text('MKT-PAY-REQ-7Q2M9XKD'),
    at: Timestamp,
    requestId: Text('5d0c6f8e-2a1b-4c3d-9e8f-7a6b5c4d3e2f'),
    clientAddress: Text('203.0.113.7').nullable(),
    /** The service where the action took effect. */
    service: Text('wallet'),
    before: AuditSnapshot.nullable().meta({ examples: [{ status: 'Pending' }] }),
    after: AuditSnapshot.nullable().meta({ examples: [{ status: 'Approved' }] }),
    notes: Text('Account checked').nullable(),
  })
  .meta({ id: 'AuditEntry' });

export const AuditLogResponse = z
  .strictObject({
    entries: z.array(AuditEntryResponse),
    /** Pass as `cursor` for the next (older) page; null on the last page. */
    nextCursor: z
      .string()
      .nullable()
      .meta({ examples: [null] }),
  })
  .meta({ id: 'AuditLog' });

/** The export's columns, in order. */
export const AUDIT_CSV_COLUMNS = [
  'id',
  'at',
  'action',
  'actorId',
  'actorRole',
  'targetType',
  'targetId',
  'service',
  'requestId',
  'clientAddress',
  'notes',
  'before',
  'after',
] as const;
