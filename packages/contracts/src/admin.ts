import { z } from 'zod';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, PageQuery } from './pagination';
import { BookingHoldStatus, HoldSettlement, PayoutStatus } from './wallet';
import { Count, NullableTimestamp, PrefixedRef, Text, Timestamp, UserId, UserRole } from './responses/common';

/**
 * The admins' work: the queues of what waits for them (payouts, consultation approvals, holds
 * overdue or disputed) and the audit log of what they did. An admin action's entry travels as
 * an event (`<service>.admin_action.recorded`: wallet, consultation, review, catalog, crm) written in the
 * same conditional update as the action (the outbox), and the gateway keeps the append-only log.
 */

// ---------------------------------------------------------------------------------------------
// The audit log

/** Every admin action the log names (`<target>.<verb>`). */
export const AUDIT_ACTIONS = [
  'payout.approve',
  'payout.reject',
  'payout.process',
  'payout.complete',
  'payout.fail',
  'payout.cancel',
  'booking_hold.void',
  'booking_hold.uphold',
  'consultation.approve',
  'consultation.approve_revision',
  'consultation.edit',
  'session.start',
  'session.end',
  'session.no_show',
  'product.edit',
  'product.visibility',
  'product.delete',
  'customer.create',
  'customer.edit',
  'customer.delete',
  'review.hide',
  'review.restore',
] as const;
export const AuditAction = z.enum(AUDIT_ACTIONS).meta({ id: 'AuditAction' });
export type AuditAction = z.infer<typeof AuditAction>;

export const AUDIT_TARGET_TYPES = ['payout', 'booking_hold', 'consultation', 'session', 'product', 'customer', 'review'] as const;
export const AuditTargetType = z.enum(AUDIT_TARGET_TYPES).meta({ id: 'AuditTargetType' });
export type AuditTargetType = z.infer<typeof AuditTargetType>;

/** A record's fields before or after an action (only what the action changed or decided on). */
const Snapshot = z.record(z.string(), z.unknown());

/**
 * The data of an admin-action event: the entry of the audit log (its id is the event's id).
 * Read tolerantly: an action or target a later release adds is still recorded.
 */
export const AdminActionRecordedData = z.object({
  action: z.string().min(1).max(60),
  actorId: z.string().min(1),
  actorRole: z.enum(['buyer', 'seller', 'admin']),
  targetType: z.string().min(1).max(40),
  targetId: z.string().min(1).max(120),
  at: z.string().datetime({ offset: true }),
  /** The gateway's `x-request-id` of the request that made the action. */
  requestId: z.string().min(1).max(128),
  /** The client's address as the gateway saw it; null when the request did not come through it. */
  clientAddress: z.string().max(64).nullable(),
  before: Snapshot.nullable(),
  after: Snapshot.nullable(),
  /** The admin's notes or reason. */
  notes: z.string().max(1000).nullable(),
});
export type AdminActionRecordedData = z.infer<typeof AdminActionRecordedData>;

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
    before: Snapshot.nullable().meta({ examples: [{ status: 'Pending' }] }),
    after: Snapshot.nullable().meta({ examples: [{ status: 'Approved' }] }),
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

// ---------------------------------------------------------------------------------------------
// The queues

/** The payout states that wait for an admin's next move. */
export const PAYOUT_QUEUE_STATUSES = ['Pending', 'Approved', 'Processing'] as const;

export const PayoutQueueState = z.enum(PAYOUT_QUEUE_STATUSES).meta({ id: 'PayoutQueueState' });

export const PayoutQueueQuery = PageQuery.extend({
  status: PayoutQueueState.optional(),
  userId: z.uuid().optional(),
}).strict();
export type PayoutQueueQuery = z.infer<typeof PayoutQueueQuery>;

const DecimalAmount = z
  .string()
  .regex(/^\d+\.\d{2}$/)
  .meta({ examples: ['150.00'] });

export const PayoutQueueResponse = z
  .strictObject({
    /** How many wait in each state (the filters other than `status` applied). */
    counts: z.strictObject({ Pending: Count(3), Approved: Count(1), Processing: Count(0) }),
    items: z.array(
      z.strictObject({
        referenceId: PrefixedRef('PAY-REQ'),
        userId: UserId,
        requestedAmount: DecimalAmount,
        currency: Text('ETB'),
        status: PayoutStatus,
        bankCode: Text('CBE'),
        accountName: Text('Sara Tesfaye'),
        reason: Text('Monthly withdrawal'),
        /** Who asked for it (the wallet's owner). */
        requestedBy: UserId.nullable(),
        /** The admins' moves so far: who already reviewed it. */
        reviewedBy: z.array(z.strictObject({ userId: UserId, action: Text('approve'), at: Timestamp })),
        /** The moves the state allows next. */
        nextMoves: z.array(Text('process')),
        /** Whether the calling admin may take the next step (four eyes: never on a payout of their own). */
        mayAct: z.boolean(),
        /** Why not, when `mayAct` is false. */
        blockedBecause: Text('Another admin must move a payout you requested').nullable(),
        createdAt: Timestamp,
      }),
    ),
  })
  .meta({ id: 'PayoutQueue' });

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
        changes: Snapshot.nullable().meta({ examples: [null] }),
        /** When it began to wait: the revision's submission, or the consultation's last change. */
        waitingSince: Timestamp,
      }),
    ),
  })
  .meta({ id: 'ApprovalQueue' });

/** `overdue`: open past its slot's end plus the grace; `disputed`: a no-show the buyer disputes. */
export const HoldQueueKind = z.enum(['overdue', 'disputed']).meta({ id: 'HoldQueueKind' });

export const HoldQueueQuery = PageQuery.extend({
  kind: HoldQueueKind.optional(),
}).strict();
export type HoldQueueQuery = z.infer<typeof HoldQueueQuery>;

export const HoldQueueResponse = z
  .strictObject({
    counts: z.strictObject({ overdue: Count(1), disputed: Count(2) }),
    items: z.array(
      z.strictObject({
        bookingId: Text('bk_k2j4h6g8f0d2s4a6'),
        status: BookingHoldStatus,
        settlement: HoldSettlement.nullable(),
        amountMinor: Count(120000),
        currency: Text('ETB'),
        buyerId: UserId,
        sellerId: UserId,
        endsAt: NullableTimestamp,
        dueAt: NullableTimestamp,
        overdue: z.boolean(),
        disputed: z.boolean(),
        disputeReason: Text('I joined on time; nobody was there').nullable(),
        disputedAt: NullableTimestamp,
        createdAt: Timestamp,
      }),
    ),
  })
  .meta({ id: 'HoldQueue' });

// ---------------------------------------------------------------------------------------------
// Making an entry

/** Where an admin action came from: the request's id and the client's address the gateway saw. */
export interface AdminRequestContext {
  requestId: string;
  clientAddress: string | null;
}

/** The audit entry of an admin action (the data of its `*.admin_action.recorded` event). */
export function adminActionData(
  actor: { id: string; role: 'buyer' | 'seller' | 'admin' },
  action: AuditAction,
  target: { type: AuditTargetType; id: string },
  context: AdminRequestContext,
  at: Date,
  change: { before?: Record<string, unknown> | null; after?: Record<string, unknown> | null; notes?: string | null } = {},
): AdminActionRecordedData {
  return {
    action,
    actorId: actor.id,
    actorRole: actor.role,
    targetType: target.type,
    targetId: target.id,
    at: at.toISOString(),
    requestId: context.requestId,
    clientAddress: context.clientAddress,
    before: change.before ?? null,
    after: change.after ?? null,
    notes: change.notes ?? null,
  };
}
