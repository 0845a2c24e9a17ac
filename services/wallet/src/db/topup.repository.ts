import type { IntegrationEvent, PageQuery, TopUpStatus } from '@mkt/contracts/wallet';
import { eventsWritten } from '@mkt/kit/bus';
import { findPage, type Page } from '@mkt/kit/db';
import type { TopUpDoc } from '../domain/records';
import type { WalletModels } from './models';

/** Every query of `topups`. */
export class TopUpRepository {
  readonly model: WalletModels['TopUp'];

  constructor(models: Pick<WalletModels, 'TopUp'>) {
    this.model = models.TopUp;
  }

  /** A user's top-ups, newest first, of one status or all (the owner's history). */
  history(userId: string, query: PageQuery & { status?: TopUpStatus }): Promise<Page<TopUpDoc>> {
    return findPage(this.model, { userId, ...(query.status ? { status: query.status } : {}) }, query, { createdAt: -1, _id: -1 });
  }

  async create(fields: Omit<TopUpDoc, 'createdAt' | 'updatedAt' | 'completedAt' | 'credit' | 'pendingEvents'>): Promise<TopUpDoc> {
    return (await this.model.create(fields)).toObject();
  }

  findById(id: string): Promise<TopUpDoc | null> {
    return this.model.findById(id).lean<TopUpDoc>();
  }

  findByReference(referenceId: string): Promise<TopUpDoc | null> {
    return this.model.findOne({ referenceId }).lean<TopUpDoc>();
  }

  /**
   * `from` → Completed, with its event and the credit owed, in one write: whoever wins the
   * transition credits. Null when it was not in `from` (a repeat). The event is published right
   * after the write (`eventsWritten`).
   */
  async complete(id: string, from: TopUpStatus[], event: IntegrationEvent, now: Date): Promise<TopUpDoc | null> {
    const completed = await this.model
      .findOneAndUpdate(
        { _id: id, status: { $in: from } },
        {
          $set: { status: 'Completed', completedAt: now, credit: 'pending', checkoutTokenHash: null },
          $push: { pendingEvents: event },
        },
        { new: true },
      )
      .lean<TopUpDoc>();
    if (completed) eventsWritten(this.model, completed);
    return completed;
  }

  /** Ends a Processing top-up without money (Failed, Cancelled, Expired). */
  async end(id: string, status: 'Failed' | 'Cancelled' | 'Expired'): Promise<void> {
    await this.model.updateOne({ _id: id, status: 'Processing' }, { $set: { status, checkoutTokenHash: null } });
  }

  /** The credit step recorded (pending → done). */
  async recordCredit(id: string): Promise<void> {
    await this.model.updateOne({ _id: id, credit: 'pending' }, { $set: { credit: 'done' } });
  }

  /** Top-ups whose credit is owed (a crash, or no room under the ceiling yet). */
  creditOwed(): Promise<TopUpDoc[]> {
    return this.model.find({ credit: 'pending' }).limit(100).lean<TopUpDoc[]>();
  }

  /** Top-ups Processing since before `before`: the reconciliation asks the provider about them. */
  processingSince(before: Date): Promise<TopUpDoc[]> {
    return this.model
      .find({ status: 'Processing', createdAt: { $lt: before } })
      .limit(100)
      .lean<TopUpDoc[]>();
  }
}
