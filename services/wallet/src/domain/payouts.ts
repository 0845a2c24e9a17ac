import {
  makeEvent,
  type AdminRequestContext,
  type Bank,
  type CreatePayoutBody,
  type IntegrationEvent,
  type PayoutStatus,
} from '@mkt/contracts/wallet';
import type { AuthenticatedUser } from '@mkt/kit/http';
import { Forbidden, InvalidState } from '@mkt/kit/domain';
import { assertOwnerOrAdmin } from './access';
import { walletAuditEvent } from './admin-audit';
import { accountNumberFits, activeBank } from './banks';
import { holdOutcomeDeltas, payoutTransition, type PayoutMove } from './payout-states';
import type { PayoutDoc, PayoutHistoryEntry, WalletOp } from './records';
import { BadAccountNumber, InsufficientFunds, UnknownBank } from './errors';

/** Payout requests: the amount is held at creation and released or paid out at the end. */

/** How long a payout's hold may stay unrecorded before the sweep finishes it (a live request is done by then). */
export const HOLD_GRACE_MS = 30_000;

export function statusEvent(
  payout: Pick<PayoutDoc, 'referenceId' | 'userId' | 'amountMinor' | 'currency'>,
  status: string,
  correlationId: string,
): IntegrationEvent {
  return makeEvent(
    'wallet.payout.status_changed',
    { reference: payout.referenceId, userId: payout.userId, amountMinor: payout.amountMinor, currency: payout.currency, status },
    { source: 'wallet', correlationId },
  );
}

/** One line of a payout's audit trail: who did what, when, with which notes. */
export function historyEntry(
  user: AuthenticatedUser,
  action: PayoutMove | 'request',
  from: PayoutStatus | null,
  to: PayoutStatus,
  notes: string | undefined,
  now: Date,
): PayoutHistoryEntry {
  return { action, from, to, byUserId: user.id, byRole: user.role, at: now, notes: notes ?? null };
}

/**
 * A payout request before any wallet is read: an active bank, an account number of its
 * digits, and only the owner asks for their money (an admin cannot request a payout from
 * someone's wallet). Answers the bank.
 */
export function checkPayoutRequest(
  user: AuthenticatedUser,
  userRef: string,
  body: Pick<CreatePayoutBody, 'bankCode' | 'accountNumber'>,
): Bank {
  const bank = activeBank(body.bankCode);
  if (!bank) throw new UnknownBank();
  if (!accountNumberFits(bank, body.accountNumber)) throw new BadAccountNumber(bank.account_length);
  if (user.ref !== userRef) throw new Forbidden('Only the wallet’s owner requests a payout');
  return bank;
}

/** Enough available for the payout (checked before the hold; the hold's own guard still holds). */
export function checkPayoutFunds(wallet: { availableMinor: number }, amountMinor: number): void {
  if (wallet.availableMinor < amountMinor) throw new InsufficientFunds();
}

/** A move decided: the guarded write (from this status, hold taken) and what it sets and pushes. */
export interface PayoutMoveDecision {
  payoutId: string;
  from: PayoutDoc['status'];
  set: Partial<Pick<PayoutDoc, 'status' | 'finish' | 'processedAt' | 'adminNotes'>>;
  event: IntegrationEvent;
  history: PayoutHistoryEntry;
  /** An admin's move: its audit entry, pushed by the same write. */
  audit: IntegrationEvent | null;
}

/**
 * Owner's cancel or an admin's move: who may (the owner or an admin cancels; only an admin moves
 * otherwise, and never a payout of their own: four eyes), whether the state allows it, and the
 * write. The state guard is in the write's filter, so of racing moves one wins. A move by an
 * admin (a cancel too) carries its audit entry (`context`: the request it came from).
 */
export function decideMove(
  user: AuthenticatedUser,
  payout: PayoutDoc,
  move: PayoutMove,
  adminNotes: string | undefined,
  correlationId: string,
  now: Date,
  context: AdminRequestContext = { requestId: correlationId, clientAddress: null },
): PayoutMoveDecision {
  if (move === 'cancel') assertOwnerOrAdmin(user, payout.userId);
  else if (user.role !== 'admin') throw new Forbidden('Only an admin moves payout requests');
  else if (user.id === payout.userId || user.id === payout.requestedBy)
    throw new Forbidden('Another admin must move a payout you requested');
  const transition = payoutTransition(move, payout.status);
  if (!transition) throw new InvalidState(`A ${payout.status} payout request cannot be moved by ${move}`);
  const set: PayoutMoveDecision['set'] = { status: transition.to };
  if (transition.hold !== 'keep') set.finish = 'pending';
  if (move !== 'cancel') set.processedAt = now;
  if (adminNotes !== undefined && move !== 'cancel') set.adminNotes = adminNotes;
  return {
    payoutId: payout._id,
    from: transition.from,
    set,
    event: statusEvent(payout, transition.to, correlationId),
    history: historyEntry(user, move, transition.from, transition.to, adminNotes, now),
    audit:
      user.role === 'admin'
        ? walletAuditEvent(user, `payout.${move}`, { type: 'payout', id: payout.referenceId }, context, now, {
            before: { status: transition.from },
            after: { status: transition.to, ...(set.adminNotes !== undefined ? { adminNotes: set.adminNotes } : {}) },
            notes: adminNotes ?? null,
          })
        : null,
  };
}

export const payoutHoldOp = (payout: Pick<PayoutDoc, '_id' | 'amountMinor' | 'referenceId'>): WalletOp => ({
  opId: `payout:${payout._id}:hold`,
  type: 'payout_hold',
  availableDeltaMinor: -payout.amountMinor,
  heldDeltaMinor: payout.amountMinor,
  reference: payout.referenceId,
});

/** The end of the hold: paid out when Completed, else released back to available. */
export function payoutFinishOp(payout: Pick<PayoutDoc, '_id' | 'amountMinor' | 'referenceId' | 'status'>): WalletOp {
  const outcome = payout.status === 'Completed' ? 'settle' : 'release';
  return {
    opId: `payout:${payout._id}:${outcome}`,
    type: outcome === 'settle' ? 'payout_settle' : 'payout_release',
    ...holdOutcomeDeltas(outcome, payout.amountMinor),
    reference: payout.referenceId,
  };
}
