import type { TransferDoc } from '../domain/records';
import type { WalletModels } from './models';

/** Every query of `transfers`; each step's record is one write guarded by the status it leaves. */
export class TransferRepository {
  readonly model: WalletModels['Transfer'];

  constructor(models: Pick<WalletModels, 'Transfer'>) {
    this.model = models.Transfer;
  }

  /** The transfer an earlier attempt of this user's keyed request created, if it did. */
  findOwn(id: string, fromUserId: string): Promise<TransferDoc | null> {
    return this.model.findOne({ _id: id, fromUserId }).lean<TransferDoc>();
  }

  async create(fields: Omit<TransferDoc, 'createdAt' | 'updatedAt' | 'completedAt'>): Promise<TransferDoc> {
    return (await this.model.create(fields)).toObject();
  }

  async recordDebit(id: string): Promise<void> {
    await this.model.updateOne({ _id: id, status: 'Pending' }, { $set: { status: 'Debited' } });
  }

  async recordCredit(id: string, completedAt: Date): Promise<void> {
    await this.model.updateOne({ _id: id, status: 'Debited' }, { $set: { status: 'Completed', completedAt } });
  }

  /** The debit was refused (short of funds): the transfer ends there. */
  async markFailed(id: string): Promise<void> {
    await this.model.updateOne({ _id: id, status: 'Pending' }, { $set: { status: 'Failed' } });
  }

  /** Transfers left Pending or Debited since before `before`. */
  unfinishedSince(before: Date): Promise<TransferDoc[]> {
    return this.model
      .find({ status: { $in: ['Pending', 'Debited'] }, updatedAt: { $lt: before } })
      .limit(100)
      .lean<TransferDoc[]>();
  }
}
