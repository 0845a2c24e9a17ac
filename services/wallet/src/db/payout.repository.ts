import { PAYOUT_QUEUE_STATUSES } from '@mkt/contracts/wallet';
import type { PageQuery, PayoutStatus } from '@mkt/contracts/wallet';
import { eventsWritten } from '@mkt/kit/bus';
import { findPage, type Page } from '@mkt/kit/db';
import type { PayoutDoc } from '../domain/records';
import type { PayoutMoveDecision } from '../domain/payouts';
import type { WalletModels } from './models';

/** Every query of `payouts`. */
export class PayoutRepository {
  readonly model: WalletModels['Payout'];

  constructor(models: Pick<WalletModels, 'Payout'>) {
    this.model = models.Payout;
  }

  /** A user's payouts whose hold is taken, newest first, of one status or all (the owner's history). */
  history(userId: string, query: PageQuery & { status?: PayoutStatus }): Promise<Page<PayoutDoc>> {
    const filter = { userId, hold: 'done', ...(query.status ? { status: query.status } : {}) };
    return findPage(this.model, filter, query, { createdAt: -1, _id: -1 });
  }

  /** The payout an earlier attempt of this user's keyed request created, if it did. */
  findOwn(id: string, userId: string): Promise<PayoutDoc | null> {
    return this.model.findOne({ _id: id, userId }).lean<PayoutDoc>();
  }

  /** A payout by reference, once its hold is taken (before that it is nobody's to see). */
  findHeld(referenceId: string): Promise<PayoutDoc | null> {
    return this.model.findOne({ referenceId, hold: 'done' }).lean<PayoutDoc>();
  }

  /**
   * The new payout carries its Pending event, published once its hold is recorded
   * (`recordHold`): a payout short of funds is deleted unheld and never announced.
   */
  async create(fields: Omit<PayoutDoc, 'createdAt' | 'updatedAt' | 'adminNotes' | 'processedAt' | 'finish'>): Promise<PayoutDoc> {
    return (await this.model.create(fields)).toObject();
  }

  /** A payout whose hold never happened (short of funds): nothing to keep. */
  async deleteUnheld(id: string): Promise<void> {
    await this.model.deleteOne({ _id: id, hold: 'pending' });
  }

  /** The hold recorded; the payout's events are published right after (`eventsWritten`). */
  async recordHold(id: string): Promise<void> {
    await this.model.updateOne({ _id: id, hold: 'pending' }, { $set: { hold: 'done' } });
    eventsWritten(this.model, id);
  }

  /** The release or settlement recorded; the move's events are published right after (`eventsWritten`). */
  async recordFinish(id: string): Promise<void> {
    await this.model.updateOne({ _id: id, finish: 'pending' }, { $set: { finish: 'done' } });
    eventsWritten(this.model, id);
  }

  /**
   * The move in one guarded write (from its status, hold taken); null when another move won. Its
   * events are published right after, or, when it leaves money to move, once that is recorded
   * (`recordFinish`).
   */
  async applyMove(decision: PayoutMoveDecision): Promise<PayoutDoc | null> {
    const moved = await this.model
      .findOneAndUpdate(
        { _id: decision.payoutId, status: decision.from, hold: 'done' },
        {
          $set: decision.set,
          $push: {
            pendingEvents: { $each: decision.audit ? [decision.event, decision.audit] : [decision.event] },
            history: decision.history,
          },
        },
        { new: true },
      )
      .lean<PayoutDoc>();
    if (moved && moved.finish !== 'pending') eventsWritten(this.model, moved);
    return moved;
  }

  /** Holds still unrecorded since before `before` (their request died). */
  holdOwedSince(before: Date): Promise<PayoutDoc[]> {
    return this.model
      .find({ hold: 'pending', createdAt: { $lt: before } })
      .limit(100)
      .lean<PayoutDoc[]>();
  }

  /** Releases and settlements still owed. */
  finishOwed(): Promise<PayoutDoc[]> {
    return this.model.find({ finish: 'pending' }).limit(100).lean<PayoutDoc[]>();
  }

  /**
   * The admins' queue: payouts whose hold is taken in a state an admin moves next (or the one
   * asked), oldest first, and how many wait in each state — on the `{status, hold, createdAt, _id}` index, in the page's order.
   */
  async queue(
    filter: { status?: PayoutDoc['status']; userId?: string },
    offset: number,
    limit: number,
  ): Promise<{ items: PayoutDoc[]; total: number; counts: Record<(typeof PAYOUT_QUEUE_STATUSES)[number], number> }> {
    const base = { hold: 'done', ...(filter.userId ? { userId: filter.userId } : {}) };
    const where = { ...base, status: filter.status ?? { $in: [...PAYOUT_QUEUE_STATUSES] } };
    const [items, total, ...counted] = await Promise.all([
      this.model.find(where).sort({ createdAt: 1, _id: 1 }).skip(offset).limit(limit).lean<PayoutDoc[]>(),
      this.model.countDocuments(where),
      ...PAYOUT_QUEUE_STATUSES.map((status) => this.model.countDocuments({ ...base, status })),
    ]);
    const counts = Object.fromEntries(PAYOUT_QUEUE_STATUSES.map((status, i) => [status, counted[i]!])) as Record<
      (typeof PAYOUT_QUEUE_STATUSES)[number],
      number
    >;
    return { items, total, counts };
  }
}
