import { randomUUID } from 'node:crypto';
import { newReference, pageOffset, type AdminRequestContext, type CreatePayoutBody, type PayoutQueueQuery } from '@mkt/contracts/wallet';
import { defineFlow, kindStep, resumeFlow, runFlow } from '@mkt/kit/steps';
import { InvalidState, NotFound } from '@mkt/kit/domain';
import type { Attempt } from '@mkt/kit/db';
import type { AuthenticatedUser } from '@mkt/kit/http';
import type { Logger } from '@mkt/kit/logger';
import type { PayoutRepository } from '../db/payout.repository';
import type { PayoutMove } from '../domain/payout-states';
import {
  checkPayoutFunds,
  checkPayoutRequest,
  decideMove,
  historyEntry,
  HOLD_GRACE_MS,
  payoutFinishOp,
  payoutHoldOp,
  statusEvent,
} from '../domain/payouts';
import type { PayoutDoc } from '../domain/records';
import { assertOwnerOrAdmin } from '../domain/access';
import { InsufficientFunds } from '../domain/errors';
import type { Limits } from './limits.use-cases';
import { stepStatus, type WalletSteps } from './wallet.steps';
import type { Wallets } from './wallets.use-cases';

/** Payout requests: the amount is held at creation and released or paid out at the end. */
export class Payouts {
  /** `hold` at creation; `finish` (release or pay-out) once a move ends the payout. */
  private readonly flow;

  constructor(
    private readonly limits: Limits,
    private readonly payouts: PayoutRepository,
    private readonly wallets: Wallets,
    steps: WalletSteps,
    private readonly log: Logger,
  ) {
    this.flow = defineFlow<PayoutDoc>('payout', [
      kindStep(steps, {
        name: 'hold',
        opId: (payout) => payoutHoldOp(payout).opId,
        status: (payout) => stepStatus(payout.hold),
        work: (payout) => ({ walletId: payout.walletId, op: payoutHoldOp(payout) }),
        record: async (payout) => {
          await this.payouts.recordHold(payout._id);
          return { ...payout, hold: 'done' };
        },
      }),
      kindStep(steps, {
        name: 'finish',
        opId: (payout) => payoutFinishOp(payout).opId,
        status: (payout) => (payout.hold === 'done' ? stepStatus(payout.finish) : 'skip'),
        work: (payout) => ({ walletId: payout.walletId, op: payoutFinishOp(payout) }),
        record: async (payout) => {
          await this.payouts.recordFinish(payout._id);
          return { ...payout, finish: 'done' };
        },
      }),
    ]);
  }

  /**
   * A new payout with id `attempt.resourceId`. A retaken attempt (its first died before it
   * answered) finds the payout that attempt created, if any, and finishes its hold instead.
   */
  async create(
    user: AuthenticatedUser,
    userRef: string,
    body: CreatePayoutBody,
    correlationId: string,
    attempt?: Attempt,
  ): Promise<PayoutDoc> {
    const bank = checkPayoutRequest(user, userRef, body);
    if (attempt?.retaken) {
      const earlier = await this.payouts.findOwn(attempt.resourceId, user.id);
      if (earlier) return this.finishCreate(earlier);
    }
    const wallet = await this.wallets.open(user.id, user.ref);
    checkPayoutFunds(wallet, body.amountMinor);
    const release = await this.limits.reserve(wallet.userId);
    const id = attempt?.resourceId ?? randomUUID();
    const fields = {
      referenceId: newReference('PAY-REQ', this.wallets.referencePrefix),
      userId: wallet.userId,
      amountMinor: body.amountMinor,
      currency: wallet.currency,
    };
    let payout: PayoutDoc | null = null;
    try {
      payout = await this.payouts.create({
        _id: id,
        ...fields,
        walletId: wallet._id,
        bankCode: bank.code,
        accountNumber: body.accountNumber,
        accountName: body.accountName,
        reason: body.reason,
        status: 'Pending',
        hold: 'pending',
        requestedBy: user.id,
        history: [historyEntry(user, 'request', null, 'Pending', undefined, new Date())],
        pendingEvents: [statusEvent(fields, 'Pending', correlationId)],
      });
      await runFlow(this.flow, payout);
    } catch (err) {
      // Short of funds: nothing was held, so nothing is kept. Any other failure after the
      // record exists is left to `resume`, which finishes the hold it may have taken.
      if (err instanceof InsufficientFunds) await this.payouts.deleteUnheld(id);
      if (err instanceof InsufficientFunds || !payout) await release();
      throw err;
    }
    this.log.info({ payoutId: id, amountMinor: body.amountMinor }, 'payout requested');
    return payout;
  }

  /** A payout an earlier attempt created: its hold finished (once, by op id), then its answer. */
  private async finishCreate(payout: PayoutDoc): Promise<PayoutDoc> {
    try {
      await runFlow(this.flow, payout);
    } catch (err) {
      if (err instanceof InsufficientFunds) await this.payouts.deleteUnheld(payout._id);
      throw err;
    }
    return payout;
  }

  /** A payout as its owner or an admin may read it. */
  async statusOf(user: AuthenticatedUser, referenceId: string): Promise<PayoutDoc> {
    const payout = await this.find(referenceId);
    assertOwnerOrAdmin(user, payout.userId);
    return payout;
  }

  /** The admins' queue: what waits for a move, oldest first, with the counts per state. */
  queue(query: PayoutQueueQuery): ReturnType<PayoutRepository['queue']> {
    return this.payouts.queue({ status: query.status, userId: query.userId }, pageOffset(query), query.limit);
  }

  /** Owner's cancel or an admin's move; the state guard is in the write, so racing moves: one wins. */
  async move(
    user: AuthenticatedUser,
    referenceId: string,
    move: PayoutMove,
    adminNotes: string | undefined,
    context: AdminRequestContext,
  ): Promise<PayoutDoc> {
    const payout = await this.find(referenceId);
    const decision = decideMove(user, payout, move, adminNotes, context.requestId, new Date(), context);
    const moved = await this.payouts.applyMove(decision);
    if (!moved) throw new InvalidState(`The payout request is no longer ${decision.from}`);
    this.log.info(
      { payoutId: moved._id, move, from: decision.from, status: moved.status, byUserId: user.id, byRole: user.role, notes: adminNotes },
      'payout moved',
    );
    await runFlow(this.flow, moved);
    return moved;
  }

  /** Finishes what a crash interrupted (the runner resumes the flow): holds not yet recorded, releases and settlements. */
  async resume(now = new Date()): Promise<void> {
    await resumeFlow(this.flow, {
      unfinished: () => this.payouts.holdOwedSince(new Date(now.getTime() - HOLD_GRACE_MS)),
      onError: async (err, payout) => {
        if (!(err instanceof InsufficientFunds)) throw err;
        // Never acknowledged to the client (the request died before the hold): nothing to keep.
        await this.payouts.deleteUnheld(payout._id);
      },
    });
    await resumeFlow(this.flow, { unfinished: () => this.payouts.finishOwed() });
  }

  private async find(referenceId: string): Promise<PayoutDoc> {
    const payout = await this.payouts.findHeld(referenceId);
    if (!payout) throw new NotFound('Payout request');
    return payout;
  }
}
