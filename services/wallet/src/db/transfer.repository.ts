import type { PageQuery } from '@mkt/contracts/wallet';
import { findPage, type Page } from '@mkt/kit/db';
import type { TransferDoc } from '../domain/records';
import { recordsOf } from './collections';
import type { WalletModels } from './models';

/** Every query of `transfers`; each step's record is one write guarded by the status it leaves. */
export class TransferRepository {
  readonly model: WalletModels['Transfer'];

  constructor(models: Pick<WalletModels, 'Transfer'>) {
    this.model = models.Transfer;
  }

  /** A user's transfers, sent, received or both, newest first, of one status or all (their history). */
  history(
    userId: string,
    query: PageQuery & { status?: TransferDoc['status']; direction: 'sent' | 'received' | 'all' },
  ): Promise<Page<TransferDoc>> {
    const party =
      query.direction === 'sent'
        ? { fromUserId: userId }
        : query.direction === 'received'
          ? { toUserId: userId }
          : { $or: [{ fromUserId: userId }, { toUserId: userId }] };
    return findPage(this.model, { ...party, ...(query.status ? { status: query.status } : {}) }, query, { createdAt: -1, _id: -1 });
  }

  /** The transfer an earlier attempt of this user's keyed request created, if it did. */
  findOwn(id: string, fromUserId: string): Promise<TransferDoc | null> {
    return this.model.findOne({ _id: id, fromUserId }).lean<TransferDoc>();
  }

  /**
   * Inserted by the driver as it is: every field is the service's (ids it made or read, the
   * amount and currency the contracts' schema checked at the edge), so no mongoose document is
   * built for it (casting, validation and `toObject` were most of the wallet's mongoose time on
   * a transfer).
   */
  async create(fields: Omit<TransferDoc, 'createdAt' | 'updatedAt' | 'completedAt'>, now = new Date()): Promise<TransferDoc> {
    const transfer: TransferDoc = {
      _id: fields._id,
      fromWalletId: fields.fromWalletId,
      toWalletId: fields.toWalletId,
      fromUserId: fields.fromUserId,
      toUserId: fields.toUserId,
      amountMinor: fields.amountMinor,
      currency: fields.currency,
      status: fields.status,
      completedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await recordsOf(this.model).insertOne(transfer);
    return transfer;
  }

  // The step records: one guarded write each, through the driver (the values are the service's).
  private async move(id: string, from: TransferDoc['status'] | Array<TransferDoc['status']>, set: Partial<TransferDoc>): Promise<void> {
    const status = Array.isArray(from) ? { $in: from } : from;
    await recordsOf(this.model).updateOne({ _id: id, status }, { $set: { ...set, updatedAt: new Date() } });
  }

  async recordDebit(id: string): Promise<void> {
    await this.move(id, 'Pending', { status: 'Debited' });
  }

  /** Completed: from Debited, or from Pending when the flow ran its credit right after its debit (Debited never written). */
  async recordCredit(id: string, completedAt: Date): Promise<void> {
    await this.move(id, ['Pending', 'Debited'], { status: 'Completed', completedAt });
  }

  /** The debit was refused (short of funds): the transfer ends there. */
  async markFailed(id: string): Promise<void> {
    await this.move(id, 'Pending', { status: 'Failed' });
  }

  /** The total of the completed transfers from one user to another (the capture event's `sellerFundedMinor`). */
  async completedTotal(fromUserId: string, toUserId: string): Promise<number> {
    const sent = await this.model
      .find({ fromUserId, toUserId, status: 'Completed' }, { amountMinor: 1 })
      .lean<Array<Pick<TransferDoc, 'amountMinor'>>>();
    return sent.reduce((sum, transfer) => sum + transfer.amountMinor, 0);
  }

  /** Transfers left Pending or Debited since before `before`. */
  unfinishedSince(before: Date): Promise<TransferDoc[]> {
    return this.model
      .find({ status: { $in: ['Pending', 'Debited'] }, updatedAt: { $lt: before } })
      .limit(100)
      .lean<TransferDoc[]>();
  }
}
