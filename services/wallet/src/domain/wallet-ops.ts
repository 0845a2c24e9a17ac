import type { ApplyOutcome, BoundedOp, LedgerEntry, WalletOp } from './records';
import { BalanceCeilingExceeded, InsufficientFunds } from './wallet.errors';

/**
 * The largest balance any wallet may reach whatever the configuration (10 trillion ETB): sums
 * of balances and a credit stay far below 2^53, so no arithmetic on money is ever inexact.
 */
export const HARD_CEILING_MINOR = 1_000_000_000_000_000;

/** How long a wallet remembers an op id after its record recorded the step. */
export const FORGET_OPS_AFTER_MS = 60 * 60_000;

function assertAmount(minor: number): void {
  if (!Number.isSafeInteger(minor) || Math.abs(minor) > HARD_CEILING_MINOR) throw new RangeError(`Amount out of range: ${minor}`);
}

/**
 * An op as the wallet's guarded write takes it: both deltas safe integers within the hard
 * ceiling (else RangeError, nothing written), and the ceiling it is held to (its own, never
 * above the hard one).
 */
export function boundedOp(op: WalletOp): BoundedOp {
  assertAmount(op.availableDeltaMinor);
  assertAmount(op.heldDeltaMinor);
  return { ...op, ceilingMinor: Math.min(op.ceilingMinor ?? HARD_CEILING_MINOR, HARD_CEILING_MINOR) };
}

/** What an op adds to a wallet's balance (available + held); a credit when positive. */
export const growthOf = (op: Pick<WalletOp, 'availableDeltaMinor' | 'heldDeltaMinor'>) => op.availableDeltaMinor + op.heldDeltaMinor;

/**
 * Why a guarded write matched no wallet, from the wallet as it then reads (null: none): its op
 * applied already (a repeat), short of available or held, or over the ceiling.
 */
export function refusalOf(
  wallet: { appliedOps: string[]; availableMinor: number; heldMinor: number } | null,
  op: WalletOp,
): Exclude<ApplyOutcome['kind'], 'applied'> {
  if (wallet?.appliedOps.includes(op.opId)) return 'repeat';
  const short = wallet !== null && (wallet.availableMinor < -op.availableDeltaMinor || wallet.heldMinor < -op.heldDeltaMinor);
  if (wallet && growthOf(op) > 0 && !short) return 'ceiling_exceeded';
  return 'insufficient_funds';
}

/** The ledger entry an op writes with its balance change. */
export function ledgerEntryOf(walletId: string, op: WalletOp, now: Date): LedgerEntry {
  return {
    id: op.opId,
    walletId,
    type: op.type,
    availableDeltaMinor: op.availableDeltaMinor,
    heldDeltaMinor: op.heldDeltaMinor,
    reference: op.reference,
    createdAt: now.toISOString(),
  };
}

/**
 * An outcome as a step sees it: the pending entries when this call applied the op, null for a
 * repeat; a refusal is InsufficientFunds or BalanceCeilingExceeded and changed nothing.
 */
export function appliedEntries(outcome: ApplyOutcome): LedgerEntry[] | null {
  if (outcome.kind === 'applied') return outcome.pendingEntries;
  if (outcome.kind === 'repeat') return null;
  if (outcome.kind === 'ceiling_exceeded') throw new BalanceCeilingExceeded();
  throw new InsufficientFunds();
}

/** Does a wallet of this balance have room for a credit under `ceilingMinor`? */
export function fitsUnder(wallet: { availableMinor: number; heldMinor: number }, creditMinor: number, ceilingMinor: number): boolean {
  return wallet.availableMinor + wallet.heldMinor + creditMinor <= ceilingMinor;
}
