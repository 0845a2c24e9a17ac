import type { PayoutAdminMove, PayoutStatus } from '@mkt/contracts/wallet';

export type PayoutMove = PayoutAdminMove | 'cancel';

/** What happens to the held amount when a payout reaches a state. */
export type HoldOutcome = 'keep' | 'release' | 'settle';

interface Transition {
  from: PayoutStatus;
  to: PayoutStatus;
  hold: HoldOutcome;
}

/**
 * Pending → Approved | Rejected | Cancelled (owner); Approved → Processing → Completed | Failed.
 * Rejected, Failed and Cancelled give the held amount back; Completed pays it out.
 */
export const PAYOUT_TRANSITIONS: Record<PayoutMove, Transition> = {
  approve: { from: 'Pending', to: 'Approved', hold: 'keep' },
  reject: { from: 'Pending', to: 'Rejected', hold: 'release' },
  cancel: { from: 'Pending', to: 'Cancelled', hold: 'release' },
  process: { from: 'Approved', to: 'Processing', hold: 'keep' },
  complete: { from: 'Processing', to: 'Completed', hold: 'settle' },
  fail: { from: 'Processing', to: 'Failed', hold: 'release' },
};

export function payoutTransition(move: PayoutMove, current: PayoutStatus): Transition | null {
  const transition = PAYOUT_TRANSITIONS[move];
  return transition.from === current ? transition : null;
}

/** Deltas of the wallet when the hold ends. */
export function holdOutcomeDeltas(outcome: Exclude<HoldOutcome, 'keep'>, amountMinor: number) {
  return outcome === 'release'
    ? { availableDeltaMinor: amountMinor, heldDeltaMinor: -amountMinor }
    : { availableDeltaMinor: 0, heldDeltaMinor: -amountMinor };
}
