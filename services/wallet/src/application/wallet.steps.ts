import { randomUUID } from 'node:crypto';
import type { StepKind, StepStatus } from '@mkt/kit/steps';
import type { LedgerRepository } from '../db/ledger.repository';
import type { WalletRepository } from '../db/wallet.repository';
import type { ApplyOutcome, StepState, WalletOp } from '../domain/records';
import { appliedOnce, boundedOp, inflightOf, ledgerEntryOf, refusalOf } from '../domain/wallet-ops';

/** A record's step field as the runner reads it: owed (`pending`) is to do; `none` is not part of the flow. */
export const stepStatus = (state: StepState): StepStatus => (state === 'pending' ? 'todo' : state === 'done' ? 'done' : 'skip');

/** One money move of a flow: an op on a wallet. */
export interface WalletWork {
  walletId: string;
  op: WalletOp;
}

/**
 * Applies each op once, at a cost that does not grow with a wallet's history (README "Money",
 * "Exactly once"): three single-document writes, after which the op id is left only in the ledger.
 *
 * 1. `escrow`: the wallet takes the op into flight under its guards — what it takes leaves the
 *    balances, what it adds waits; the op (entry and this run's token) sits in `inflight`.
 * 2. `decide`: its ledger entry is inserted with the token. The op id is the entry's unique key:
 *    the first insert ever decides the op applied; any later run of the op finds it there.
 * 3. `commit` (decided by this token: what it adds reaches the balances) or `rollback` (applied
 *    before: what this run took goes back), each matched on the token, so done once.
 *
 * For kit's runner the whole of it is the step's `apply`; the owning record records the step
 * after it, and `after` has nothing left to do.
 */
export class WalletSteps implements StepKind<WalletWork, boolean> {
  constructor(
    private readonly wallets: WalletRepository,
    private readonly ledger: LedgerRepository,
  ) {}

  /** The op's outcome as it is (a refusal is an outcome, not an error). */
  async applyOp(walletId: string, op: WalletOp, now = new Date()): Promise<ApplyOutcome> {
    const bounded = boundedOp(op);
    const mine = inflightOf(ledgerEntryOf(walletId, bounded, now), randomUUID());
    for (let attempt = 0; attempt < 3; attempt += 1) {
      if (await this.wallets.escrow(walletId, bounded, mine, now))
        return { kind: (await this.ledger.finish(walletId, mine)) ? 'applied' : 'repeat' };
      // Refused. Why is read in this order: an op leaves flight only once its entry is in the
      // ledger, so an op neither in flight on this read nor in the ledger after it was not in
      // flight at the refusal either — the refusal was the guards'.
      const state = await this.wallets.guardState(walletId);
      if (state?.legacy) {
        await this.ledger.migrate(walletId); // a wallet of the previous release: migrated, then the op is taken again
        continue;
      }
      const theirs = state?.inflight.find((inflight) => inflight.id === bounded.opId);
      if (theirs) {
        // Another run of the same step holds it in flight: finished here (safe beside that run).
        await this.ledger.finish(walletId, theirs);
        return { kind: 'repeat' };
      }
      if (await this.ledger.has(bounded.opId)) return { kind: 'repeat' };
      const refusal = refusalOf(state, bounded);
      if (refusal) return { kind: refusal };
    }
    // The wallet changed under every attempt (its guards passed on each read, never on the write).
    return { kind: 'insufficient_funds' };
  }

  /** Applies an op once: true when this call applied it, false for a repeat; a refusal is InsufficientFunds or BalanceCeilingExceeded. */
  async apply(work: WalletWork): Promise<boolean> {
    return appliedOnce(await this.applyOp(work.walletId, work.op));
  }

  /** Nothing: an applied op is in the ledger and the balances already (the record has recorded the step). */
  async after(): Promise<void> {}

  /** Has this op reached the wallet (an op in flight is finished first)? */
  hasApplied(walletId: string, opId: string): Promise<boolean> {
    return this.ledger.hasApplied(walletId, opId);
  }
}
