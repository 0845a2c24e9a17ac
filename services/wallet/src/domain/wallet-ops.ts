import type { ApplyOutcome, BoundedOp, InflightOp, LedgerEntry, WalletOp } from './records';
import { BalanceCeilingExceeded, InsufficientFunds } from './errors';

/**
 * The largest balance any wallet may reach whatever the configuration (10 trillion ETB): sums
 * of balances and a credit stay far below 2^53, so no arithmetic on money is ever inexact.
 */
export const HARD_CEILING_MINOR = 1_000_000_000_000_000;

/**
 * An op left in flight this long (its run died between taking the amounts and committing) is
 * finished by the sweep. Finishing is safe at any time, even beside a live run: this only keeps
 * the sweep from doing a live run's work.
 */
export const FINISH_INFLIGHT_AFTER_MS = 10_000;

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
 * How an op moves a wallet's balances in two writes: what it takes (its negative deltas) leaves
 * the balances when it is taken into flight, under the guards, so two runs cannot spend the same
 * money; what it adds (its positive deltas) reaches them only at the commit, so an op found
 * applied before (rolled back) never lent anyone money. Amounts as non-negative numbers.
 */
export function escrowOf(op: Pick<WalletOp, 'availableDeltaMinor' | 'heldDeltaMinor'>) {
  const take = (delta: number) => (delta < 0 ? -delta : 0);
  const add = (delta: number) => (delta > 0 ? delta : 0);
  const takeAvailableMinor = take(op.availableDeltaMinor);
  const takeHeldMinor = take(op.heldDeltaMinor);
  const addAvailableMinor = add(op.availableDeltaMinor);
  const addHeldMinor = add(op.heldDeltaMinor);
  return {
    takeAvailableMinor,
    takeHeldMinor,
    addAvailableMinor,
    addHeldMinor,
    inMinor: addAvailableMinor + addHeldMinor,
    outMinor: takeAvailableMinor + takeHeldMinor,
  };
}

/** The wallet as a refused guarded write reads it. */
export interface WalletGuardState {
  availableMinor: number;
  heldMinor: number;
  inflightInMinor?: number;
  inflightOutMinor?: number;
}

/**
 * Why the guarded write that takes an op into flight matched no wallet, from the wallet as it
 * then reads (null: none) — once the op is known to be neither in flight nor applied: short of
 * available or held, or over the ceiling (counting what ops in flight add, and what they took:
 * a rollback gives that back). Null when the guards pass on this read (the wallet changed
 * between the write and the read: take the op again).
 */
export function refusalOf(wallet: WalletGuardState | null, op: WalletOp): 'insufficient_funds' | 'ceiling_exceeded' | null {
  if (!wallet) return 'insufficient_funds';
  if (wallet.availableMinor < -op.availableDeltaMinor || wallet.heldMinor < -op.heldDeltaMinor) return 'insufficient_funds';
  const growth = growthOf(op);
  const counted = wallet.availableMinor + wallet.heldMinor + (wallet.inflightInMinor ?? 0) + (wallet.inflightOutMinor ?? 0);
  if (growth > 0 && counted + growth > (op.ceilingMinor ?? HARD_CEILING_MINOR)) return 'ceiling_exceeded';
  return null;
}

/** An op's ledger entry as carried in flight by the run `token` (the entry the ledger decides by). */
export const inflightOf = (entry: LedgerEntry, token: string): InflightOp => ({ ...entry, token });

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
 * An outcome as a step sees it: true when this call applied the op, false for a repeat; a
 * refusal is InsufficientFunds or BalanceCeilingExceeded and changed nothing.
 */
export function appliedOnce(outcome: ApplyOutcome): boolean {
  if (outcome.kind === 'applied') return true;
  if (outcome.kind === 'repeat') return false;
  if (outcome.kind === 'ceiling_exceeded') throw new BalanceCeilingExceeded();
  throw new InsufficientFunds();
}

/** Does a wallet of this balance have room for a credit under `ceilingMinor`? */
export function fitsUnder(wallet: { availableMinor: number; heldMinor: number }, creditMinor: number, ceilingMinor: number): boolean {
  return wallet.availableMinor + wallet.heldMinor + creditMinor <= ceilingMinor;
}
