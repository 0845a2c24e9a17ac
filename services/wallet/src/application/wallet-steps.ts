import type { StepKind, StepStatus } from '@mkt/kit';
import type { LedgerRepository } from '../db/ledger.repository';
import type { WalletRepository } from '../db/wallet.repository';
import type { ApplyOutcome, LedgerEntry, StepState, WalletOp } from '../domain/records';
import { appliedEntries, boundedOp, ledgerEntryOf, refusalOf } from '../domain/wallet-ops';

/** A record's step field as the runner reads it: owed (`pending`) is to do; `none` is not part of the flow. */
export const stepStatus = (state: StepState): StepStatus => (state === 'pending' ? 'todo' : state === 'done' ? 'done' : 'skip');

/** One money move of a flow: an op on a wallet. */
export interface WalletWork {
  walletId: string;
  op: WalletOp;
  /**
   * The op id stays on the wallet after the step (a booking's: forgotten only long after its
   * settlement ended, by the hold sweep); otherwise it is marked done and dropped an hour later.
   */
  keepOpId?: boolean;
}

/**
 * The wallet's kind of step for kit's runner, in the only safe order: apply the op to the wallet
 * (once, by its op id: the guard is in the write), [the runner records the step on the owning
 * record], then move the ledger entries and let the wallet forget the op id (one update after
 * the ledger insert). A crash anywhere leaves the record saying the step is still to do, and the
 * repeat finds the op applied and changes nothing.
 */
export class WalletSteps implements StepKind<WalletWork, LedgerEntry[] | null> {
  constructor(
    private readonly wallets: WalletRepository,
    private readonly ledger: LedgerRepository,
  ) {}

  /** The guarded write's outcome as it is (a refusal is an outcome, not an error). */
  async applyOp(walletId: string, op: WalletOp, now = new Date()): Promise<ApplyOutcome> {
    const bounded = boundedOp(op);
    return this.wallets.apply(walletId, bounded, ledgerEntryOf(walletId, bounded, now), (wallet) => refusalOf(wallet, bounded), now);
  }

  /**
   * Applies an op once: the wallet's pending ledger entries when this call applied it, null for
   * a repeat; a refusal is InsufficientFunds or BalanceCeilingExceeded and changes nothing.
   */
  async apply(work: WalletWork): Promise<LedgerEntry[] | null> {
    return appliedEntries(await this.applyOp(work.walletId, work.op));
  }

  async after(entries: LedgerEntry[] | null, work: WalletWork): Promise<void> {
    const doneOpId = work.keepOpId ? undefined : work.op.opId;
    if (entries) await this.ledger.moveAfterStep(work.walletId, entries, doneOpId);
    else if (doneOpId) await this.wallets.forgetOp(work.walletId, doneOpId); // a repeat: the sweep moves what is left
  }

  /** A move outside any flow (giving back a stray hold): applied once, its entries moved, the op id kept. */
  async applyAndMove(walletId: string, op: WalletOp): Promise<void> {
    const work = { walletId, op, keepOpId: true };
    await this.after(await this.apply(work), work);
  }
}
