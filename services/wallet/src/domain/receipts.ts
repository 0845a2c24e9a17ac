import type { AuthenticatedUser } from '@mkt/kit/http';
import { InvalidState, NotFound } from '@mkt/kit/domain';
import type { TopUpDoc } from './records';

/** A top-up whose receipt may be printed: it is Completed and has its completion time. */
export type ReceiptableTopUp = TopUpDoc & { status: 'Completed'; completedAt: Date };

/**
 * Who reads a top-up's receipt: its owner or an admin; to anyone else the top-up does not
 * exist (404, its existence not revealed). A receipt exists only for a completed top-up: an
 * open, failed, cancelled or expired one is 409 `invalid_state` (to those who may see it).
 */
export function receiptableTopUp(user: AuthenticatedUser, topUp: TopUpDoc | null): ReceiptableTopUp {
  if (!topUp || (user.role !== 'admin' && user.id !== topUp.userId)) throw new NotFound('Top-up');
  if (topUp.status !== 'Completed' || !topUp.completedAt)
    throw new InvalidState(`A ${topUp.status} top-up has no receipt: only a completed one has`);
  return topUp as ReceiptableTopUp;
}
