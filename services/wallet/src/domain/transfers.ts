import { randomUUID } from 'node:crypto';
import type { CreateTransferBody, TransferView } from '@mkt/contracts';
import { InvalidField, NotFound, type AuthenticatedUser, type Logger } from '@mkt/kit';
import type { LedgerRelay } from '../db/ledger-relay';
import { Transfer, type TransferDoc } from '../db/records.model';
import { findWallet, openWallet } from '../db/wallet.model';
import { AmountTooLarge, BalanceCeilingExceeded, CurrencyMismatch, InsufficientFunds } from './wallet.errors';
import type { Attempt } from './idempotency';
import { runWalletStep } from './wallet-step';

const RESUME_GRACE_MS = 10_000;

export function toTransferView(transfer: TransferDoc): TransferView {
  return {
    id: transfer._id,
    fromUserId: transfer.fromUserId,
    toUserId: transfer.toUserId,
    amount: transfer.amountMinor,
    currency: transfer.currency,
    status: transfer.status,
    createdAt: transfer.createdAt.toISOString(),
    completedAt: transfer.completedAt?.toISOString() ?? null,
  };
}

/**
 * A transfer is a record with two idempotent steps, debit then credit, each recorded on the
 * record after it is applied. A crash between them leaves the record Pending or Debited, and
 * `resume` carries it on; money is never created (no credit without its debit) nor lost.
 */
export interface TransferSettings {
  referencePrefix: string;
  maxAmountMinor: number;
  ceilingMinor: number;
}

export class Transfers {
  constructor(
    private readonly settings: TransferSettings,
    private readonly ledger: LedgerRelay,
    private readonly log: Logger,
  ) {}

  private get referencePrefix(): string {
    return this.settings.referencePrefix;
  }

  /**
   * A new transfer with id `attempt.resourceId`. A retaken attempt (its first died before it
   * answered) finds the transfer that attempt created, if any, and carries it on instead.
   */
  async create(user: AuthenticatedUser, body: CreateTransferBody, attempt?: Attempt): Promise<TransferDoc> {
    if (attempt?.retaken) {
      const earlier = await Transfer.findOne({ _id: attempt.resourceId, fromUserId: user.id }).lean<TransferDoc>();
      if (earlier?.status === 'Failed') throw new InsufficientFunds();
      if (earlier) return this.carryOn(earlier);
    }
    if (body.toUserId === user.id) throw new InvalidField('A transfer goes to another user', 'toUserId');
    if (body.amount > this.settings.maxAmountMinor) throw new AmountTooLarge(this.settings.maxAmountMinor);
    const from = await openWallet(user.id, user.ref, this.referencePrefix);
    if (from.currency !== body.currency) throw new CurrencyMismatch(from.currency);
    const to = await findWallet({ userId: body.toUserId });
    if (!to) throw new NotFound('Recipient wallet');
    if (to.currency !== body.currency) throw new CurrencyMismatch(to.currency);
    // Checked before any money moves; the credit's own guard still holds under a race, and a
    // credit that then finds no room stays owed (Debited) until the sweep can apply it.
    if (to.availableMinor + to.heldMinor + body.amount > this.settings.ceilingMinor)
      throw new BalanceCeilingExceeded('The recipient’s balance would pass its ceiling');
    const transfer = await Transfer.create({
      _id: attempt?.resourceId ?? randomUUID(),
      fromWalletId: from._id,
      toWalletId: to._id,
      fromUserId: from.userId,
      toUserId: to.userId,
      amountMinor: body.amount,
      currency: body.currency,
      status: 'Pending',
    });
    return this.carryOn(transfer.toObject());
  }

  /** The debit step (exposed so tests can stop a transfer between its steps). */
  async debit(transfer: TransferDoc): Promise<TransferDoc> {
    const op = {
      opId: `transfer:${transfer._id}:debit`,
      type: 'transfer_debit' as const,
      availableDeltaMinor: -transfer.amountMinor,
      heldDeltaMinor: 0,
      reference: transfer._id,
    };
    try {
      await runWalletStep(this.ledger, transfer.fromWalletId, op, () =>
        Transfer.updateOne({ _id: transfer._id, status: 'Pending' }, { $set: { status: 'Debited' } }),
      );
    } catch (err) {
      if (err instanceof InsufficientFunds)
        await Transfer.updateOne({ _id: transfer._id, status: 'Pending' }, { $set: { status: 'Failed' } });
      throw err;
    }
    return { ...transfer, status: 'Debited' };
  }

  async credit(transfer: TransferDoc): Promise<TransferDoc> {
    const op = {
      opId: `transfer:${transfer._id}:credit`,
      type: 'transfer_credit' as const,
      availableDeltaMinor: transfer.amountMinor,
      heldDeltaMinor: 0,
      reference: transfer._id,
      ceilingMinor: this.settings.ceilingMinor,
    };
    const completedAt = new Date();
    await runWalletStep(this.ledger, transfer.toWalletId, op, () =>
      Transfer.updateOne({ _id: transfer._id, status: 'Debited' }, { $set: { status: 'Completed', completedAt } }),
    );
    this.log.info({ transferId: transfer._id, amountMinor: transfer.amountMinor }, 'transfer completed');
    return { ...transfer, status: 'Completed', completedAt };
  }

  async resume(now = new Date()): Promise<void> {
    const stuck = await Transfer.find({
      status: { $in: ['Pending', 'Debited'] },
      updatedAt: { $lt: new Date(now.getTime() - RESUME_GRACE_MS) },
    })
      .limit(100)
      .lean<TransferDoc[]>();
    for (const transfer of stuck) {
      try {
        await this.carryOn(transfer);
      } catch (err) {
        if (!(err instanceof InsufficientFunds)) this.log.warn({ err, transferId: transfer._id }, 'transfer resume failed');
      }
    }
  }

  private async carryOn(transfer: TransferDoc): Promise<TransferDoc> {
    const debited = transfer.status === 'Pending' ? await this.debit(transfer) : transfer;
    if (debited.status !== 'Debited') return debited;
    try {
      return await this.credit(debited);
    } catch (err) {
      if (!(err instanceof BalanceCeilingExceeded)) throw err;
      this.log.error({ transferId: transfer._id }, 'transfer credit waits: the recipient’s balance would pass its ceiling');
      return debited;
    }
  }
}
