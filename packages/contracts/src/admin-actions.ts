import { z } from 'zod';

/**
 * What every service writes when an admin acts: the audit entry (the data of its
 * `<service>.admin_action.recorded` event, written in the same conditional update as the action)
 * and its builder. Apart from the admins' queues and the audit log's own reads (admin.ts) so the
 * event contracts, which every service loads, carry no area's schemas.
 */

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
export const AuditSnapshot = z.record(z.string(), z.unknown());

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
  before: AuditSnapshot.nullable(),
  after: AuditSnapshot.nullable(),
  /** The admin's notes or reason. */
  notes: z.string().max(1000).nullable(),
});
export type AdminActionRecordedData = z.infer<typeof AdminActionRecordedData>;

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
