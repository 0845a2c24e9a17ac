import { pageOffset, type IntegrationEvent, type PageQuery } from '@mkt/contracts/review';
import { byIdOrReference } from '@mkt/kit/db';
import { eventsWritten } from '@mkt/kit/bus';
import type { Model } from 'mongoose';
import type { CreateDecision, VisibilityChange } from '../domain/reviews';
import type { ReviewDoc, ReviewerDoc } from '../domain/records';

/** Every query of `reviews`. */
export class ReviewRepository {
  constructor(readonly model: Model<ReviewDoc>) {}

  /**
   * Stores a new review with its event (outbox), published right after the insert
   * (`eventsWritten`). A second review of the same reviewer and entity: the unique key refuses it.
   */
  async insert(decision: CreateDecision, event: IntegrationEvent): Promise<ReviewDoc> {
    const review = (await this.model.create({ ...decision.review, pendingEvents: [event] })).toObject();
    eventsWritten(this.model, review);
    return review;
  }

  findById(id: string): Promise<ReviewDoc | null> {
    return this.model.findById(id).lean<ReviewDoc>().exec();
  }

  findByKey(key: string): Promise<ReviewDoc | null> {
    return this.model.findOne(byIdOrReference(key)).lean<ReviewDoc>().exec();
  }

  /** The buyer's review of a consultation, if any. */
  findOf(consultationId: string, buyerId: string): Promise<ReviewDoc | null> {
    return this.model
      .findOne({ reviewerId: buyerId, entityType: 'consultation_service', entityId: consultationId })
      .lean<ReviewDoc>()
      .exec();
  }

  async hasReviewed(reviewerId: string, consultationId: string): Promise<boolean> {
    return (await this.model.exists({ reviewerId, entityType: 'consultation_service', entityId: consultationId })) !== null;
  }

  /**
   * One guarded write: the change applies only to the state it was decided on (of two racing
   * changes one applies), with its event (outbox), published right after the write
   * (`eventsWritten`). The changed review, or null when it missed.
   */
  async applyVisibilityChange(
    change: VisibilityChange,
    event: IntegrationEvent,
    audit: IntegrationEvent | null = null,
  ): Promise<ReviewDoc | null> {
    const events = audit ? [event, audit] : [event];
    const changed = await this.model
      .findOneAndUpdate(
        {
          _id: change.reviewId,
          ...change.from,
          visibilityChanges: change.from.visibilityChanges ?? { $exists: false },
        },
        { $set: change.set, $push: { pendingEvents: { $each: events } } },
        { new: true },
      )
      .lean<ReviewDoc>()
      .exec();
    if (changed) eventsWritten(this.model, changed);
    return changed;
  }

  /**
   * Active reviews of an entity, newest first (one page), and the ratings of all of them: read
   * together, so the totals always describe the same reviews as the average.
   */
  async activeOf(entityType: string, entityId: string, query: PageQuery) {
    const filter = { entityType, entityId, isActive: true };
    const [page, ratings] = await Promise.all([
      this.model.find(filter).sort({ createdAt: -1 }).skip(pageOffset(query)).limit(query.limit).lean<ReviewDoc[]>(),
      this.model.find(filter, { rating: 1, countsInRating: 1 }).lean<Array<Pick<ReviewDoc, 'rating' | 'countsInRating'>>>(),
    ]);
    return { page, ratings };
  }
}

/** Every query of the users projection (`users`: reviewers' names). */
export class ReviewerRepository {
  constructor(readonly model: Model<ReviewerDoc>) {}

  async namesOf(ids: string[]): Promise<Map<string, string>> {
    const found = await this.model.find({ _id: { $in: ids } }).lean<ReviewerDoc[]>();
    return new Map(found.map((reviewer) => [reviewer._id, reviewer.fullName]));
  }

  async saveName(id: string, fullName: string): Promise<void> {
    await this.model.updateOne({ _id: id }, { $set: { fullName } }, { upsert: true });
  }
}
