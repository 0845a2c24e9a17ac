import { randomUUID } from 'node:crypto';
import type { CreateTransferBody } from '@mkt/contracts/wallet';
import { defineFlow, kindStep, resumeFlow, runFlow, type FlowRun, type Step } from '@mkt/kit/steps';
import type { Attempt } from '@mkt/kit/db';
import type { AuthenticatedUser } from '@mkt/kit/http';
import type { Logger } from '@mkt/kit/logger';
import type { TransferRepository } from '../db/transfer.repository';
import type { WalletRepository } from '../db/wallet.repository';
import type { TransferDoc } from '../domain/records';
import {
  checkTransferParties,
  checkTransferSender,
  checkTransferRequest,
  retakenTransfer,
  TRANSFER_RESUME_GRACE_MS,
  transferCreditOp,
  transferDebitOp,
  type TransferSettings,
} from '../domain/transfers';
import { BalanceCeilingExceeded, InsufficientFunds } from '../domain/errors';
import type { WalletSteps } from './wallet.steps';
import type { Wallets } from './wallets.use-cases';

/** Transfers between users' wallets: `debit` then `credit`, on kit's step runner. */
export class Transfers {
  private readonly debitStep: Step<TransferDoc>;
  private readonly creditStep: Step<TransferDoc>;
  private readonly flow;

  constructor(
    private readonly settings: TransferSettings,
    private readonly transfers: TransferRepository,
    private readonly walletRepository: WalletRepository,
    private readonly wallets: Wallets,
    steps: WalletSteps,
    private readonly log: Logger,
  ) {
    const debit = (record: (transfer: TransferDoc) => Promise<TransferDoc>): Step<TransferDoc> =>
      kindStep(steps, {
        name: 'debit',
        opId: (transfer) => transferDebitOp(transfer).opId,
        status: (transfer) => (transfer.status === 'Pending' ? 'todo' : transfer.status === 'Failed' ? 'skip' : 'done'),
        work: (transfer) => ({ walletId: transfer.fromWalletId, op: transferDebitOp(transfer) }),
        record,
      });
    // The debit alone records Debited on the transfer.
    this.debitStep = debit(async (transfer) => {
      await this.transfers.recordDebit(transfer._id);
      return { ...transfer, status: 'Debited' };
    });
    // In the flow the credit follows at once and records Completed from Pending or Debited, so
    // Debited is written only when the credit waits (`carryOn`). A transfer left Pending after
    // its debit applied (a crash before the credit) is carried on by the sweep: its debit runs
    // again as a repeat (the op id is in the ledger), then the credit.
    const debitInFlow = debit(async (transfer) => ({ ...transfer, status: 'Debited' }));
    this.creditStep = kindStep(steps, {
      name: 'credit',
      opId: (transfer) => transferCreditOp(transfer, settings.ceilingMinor).opId,
      status: (transfer) => (transfer.status === 'Debited' ? 'todo' : transfer.status === 'Completed' ? 'done' : 'skip'),
      work: (transfer) => ({ walletId: transfer.toWalletId, op: transferCreditOp(transfer, settings.ceilingMinor) }),
      record: async (transfer) => {
        const completedAt = new Date();
        await this.transfers.recordCredit(transfer._id, completedAt);
        return { ...transfer, status: 'Completed', completedAt };
      },
      // No room under the recipient's ceiling, or any other refusal of the credit (a credit is never
      // short of funds: an "insufficient funds" answer is a wallet that changed under every try, or
      // none to read): the credit stays owed (Debited) until the sweep can apply it. Never a
      // refusal that fails the transfer, whose debit is applied by now.
      waitsOn: (err) => err instanceof BalanceCeilingExceeded || err instanceof InsufficientFunds,
    });
    this.flow = defineFlow<TransferDoc>('transfer', [debitInFlow, this.creditStep]);
  }

  /**
   * A new transfer with id `attempt.resourceId`. A retaken attempt (its first died before it
   * answered) finds the transfer that attempt created, if any, and carries it on instead.
   */
  async create(user: AuthenticatedUser, body: CreateTransferBody, attempt?: Attempt): Promise<TransferDoc> {
    if (attempt?.retaken) {
      const earlier = retakenTransfer(await this.transfers.findOwn(attempt.resourceId, user.id));
      if (earlier) return this.carryOn(earlier);
    }
    checkTransferRequest(user, body, this.settings);
    // Both parties in one read; a sender without a wallet yet has it opened, as before.
    const parties = await this.walletRepository.ofUsers([user.id, body.toUserId]);
    const sender = parties.find((wallet) => wallet.userId === user.id) ?? (await this.wallets.open(user.id, user.ref));
    const from = checkTransferSender(sender, body);
    const recipient = parties.find((wallet) => wallet.userId === body.toUserId) ?? null;
    const to = checkTransferParties(from, recipient, body, this.settings.ceilingMinor);
    const transfer = await this.transfers.create({
      _id: attempt?.resourceId ?? randomUUID(),
      fromWalletId: from._id,
      toWalletId: to._id,
      fromUserId: from.userId,
      toUserId: to.userId,
      amountMinor: body.amount,
      currency: body.currency,
      status: 'Pending',
    });
    return this.carryOn(transfer);
  }

  /** The debit step alone (tests stop a transfer between its steps with it). */
  async debit(transfer: TransferDoc): Promise<TransferDoc> {
    return this.runOne(this.debitStep, transfer);
  }

  /** The credit step alone (tests replay it from a stale read). */
  async credit(transfer: TransferDoc): Promise<TransferDoc> {
    return this.runOne(this.creditStep, transfer);
  }

  /** Carries on transfers left Pending or Debited (the runner resumes their flow). */
  async resume(now = new Date()): Promise<void> {
    const runs = await resumeFlow(this.flow, {
      unfinished: () => this.transfers.unfinishedSince(new Date(now.getTime() - TRANSFER_RESUME_GRACE_MS)),
      onError: async (err, transfer) => {
        // Refused for want of funds: the transfer ends Failed, as it would have in its request.
        if (err instanceof InsufficientFunds) await this.transfers.markFailed(transfer._id);
        else this.log.warn({ err, transferId: transfer._id }, 'transfer resume failed');
      },
    });
    for (const run of runs) await this.report(run);
  }

  private async carryOn(transfer: TransferDoc): Promise<TransferDoc> {
    const run = await this.failOnRefusedDebit(transfer, () => runFlow(this.flow, transfer));
    await this.report(run);
    return run.record;
  }

  private async report(run: FlowRun<TransferDoc>): Promise<void> {
    // Stopped after the debit (the credit waits): the transfer says so.
    if (run.record.status === 'Debited') await this.transfers.recordDebit(run.record._id);
    if (run.ran.includes('credit')) this.completed(run.record);
    if (run.stoppedAt?.step === 'credit')
      this.log.error(
        { transferId: run.record._id, err: run.stoppedAt.error },
        'transfer credit waits: the recipient’s wallet refused it (its ceiling, or it changed under every try); the sweep tries again',
      );
  }

  private async runOne(step: Step<TransferDoc>, transfer: TransferDoc): Promise<TransferDoc> {
    const next = await this.failOnRefusedDebit(transfer, () => step.run(transfer, step.opId(transfer)));
    if (step === this.creditStep) this.completed(next);
    return next;
  }

  /** A debit refused for want of funds ends the transfer Failed (the refusal still goes up). */
  private async failOnRefusedDebit<T>(transfer: TransferDoc, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (err instanceof InsufficientFunds) await this.transfers.markFailed(transfer._id);
      throw err;
    }
  }

  private completed(transfer: TransferDoc): void {
    this.log.info({ transferId: transfer._id, amountMinor: transfer.amountMinor }, 'transfer completed');
  }
}
