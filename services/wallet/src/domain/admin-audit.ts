import {
  adminActionData,
  makeEvent,
  PAYOUT_QUEUE_STATUSES,
  type AdminRequestContext,
  type AuditAction,
  type AuditTargetType,
  type IntegrationEvent,
} from '@mkt/contracts/wallet';
import type { AuthenticatedUser } from '@mkt/kit/http';
import { PAYOUT_TRANSITIONS, type PayoutMove } from './payout-states';
import type { BookingHoldDoc, PayoutDoc } from './records';

/**
 * The audit entry of an admin's action in the wallet, as the event the action's own conditional
 * write pushes into the record's outbox: the action and its entry take effect together or not
 * at all (a refused or lost write records nothing), and a retry that finds the action done
 * writes nothing, so nothing a second time.
 */
export function walletAuditEvent(
  admin: Pick<AuthenticatedUser, 'id' | 'role'>,
  action: AuditAction,
  target: { type: AuditTargetType; id: string },
  context: AdminRequestContext,
  now: Date,
  change: { before?: Record<string, unknown>; after?: Record<string, unknown>; notes?: string | null },
): IntegrationEvent {
  return makeEvent('wallet.admin_action.recorded', adminActionData(admin, action, target, context, now, change), {
    source: 'wallet',
    correlationId: context.requestId,
  });
}

/** The payout states an admin's next move starts from (`PAYOUT_QUEUE_STATUSES`) and the moves each allows. */
export function nextMovesOf(status: PayoutDoc['status']): PayoutMove[] {
  if (!(PAYOUT_QUEUE_STATUSES as readonly string[]).includes(status)) return [];
  return (Object.entries(PAYOUT_TRANSITIONS) as Array<[PayoutMove, { from: string }]>)
    .filter(([move, transition]) => move !== 'cancel' && transition.from === status)
    .map(([move]) => move);
}

/**
 * Four eyes, as `decideMove` keeps it: an admin never moves a payout of their own (requested by
 * them or from their wallet). Answers why the admin may not, or null when they may.
 */
export function fourEyesBlock(admin: Pick<AuthenticatedUser, 'id'>, payout: Pick<PayoutDoc, 'userId' | 'requestedBy'>): string | null {
  return admin.id === payout.userId || admin.id === payout.requestedBy ? 'Another admin must move a payout you requested' : null;
}

/** An open hold this long past its slot's end is overdue: its settlement was never decided or carried out. */
export const HOLD_OVERDUE_AFTER_MS = 60 * 60_000;

/**
 * Whether an open hold is overdue at `now`: its slot ended more than the grace ago, and so did
 * the time its decided settlement waits for (`dueAt`: a no-show's dispute window), if any.
 */
export function isOverdueHold(hold: Pick<BookingHoldDoc, 'status' | 'endsAt' | 'dueAt'>, now: Date): boolean {
  const cutoff = now.getTime() - HOLD_OVERDUE_AFTER_MS;
  return (
    ['Pending', 'Held', 'Settling'].includes(hold.status) &&
    hold.endsAt !== null &&
    hold.endsAt.getTime() < cutoff &&
    (hold.dueAt === null || hold.dueAt.getTime() < cutoff)
  );
}
