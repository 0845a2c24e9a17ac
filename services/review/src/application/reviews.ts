import { makeEvent, newInternalId, newUnderscoreReference, pagination, type CreateReviewBody, type PageQuery } from '@mkt/contracts';
import { Conflict, foundOr404, InvalidState, isDuplicateKey, NotFound, type Logger } from '@mkt/kit';
import type { EligibilityRepository } from '../db/eligibility.repository';
import type { ReviewDoc } from '../db/models';
import type { ReviewerRepository, ReviewRepository } from '../db/review.repository';
import {
  countsInRating,
  decideCountReview,
  decideCreate,
  decideSetActive,
  eligibilityFromSession,
  ratingSummary,
  reviewStatus,
  type Caller,
  type Emit,
  type SessionOutcome,
} from '../domain/reviews';

export interface ReviewRepositories {
  reviews: ReviewRepository;
  eligibility: EligibilityRepository;
  reviewers: ReviewerRepository;
}

/** Sends a stored document's pending events now (kit's outbox relay; its sweep sends them otherwise). */
export interface OutboxFlush {
  flush(doc: ReviewDoc): Promise<void>;
}

const stamp = <T extends Emit>(emit: T, correlationId: string) => makeEvent(emit.type, emit.data, { source: 'review', correlationId });

/**
 * The review use cases: read through the repositories, decide (domain/reviews.ts), apply with
 * one guarded write that carries the event (outbox).
 */
export class Reviews {
  constructor(
    private readonly repos: ReviewRepositories,
    private readonly outbox: OutboxFlush,
    private readonly log: Logger,
  ) {}

  async create(caller: Caller, body: CreateReviewBody, correlationId: string): Promise<ReviewDoc> {
    const eligible = await this.repos.eligibility.of(caller.id, body.entityId);
    const decision = decideCreate(eligible, caller, body, { id: newInternalId('rev'), referenceId: newUnderscoreReference('REV') });
    const { _id: id, entityId, rating, countsInRating: counts } = decision.review;
    try {
      const review = await this.repos.reviews.insert(decision, stamp(decision.emit, correlationId));
      void this.outbox.flush(review);
      this.log.info({ reviewId: id, entityId, rating, countsInRating: counts }, 'review created');
      if (counts) return review;
      // A paid session completed while this was being written found no review to count: look
      // again now that it is stored (each side writes, then reads what the other wrote).
      if ((await this.repos.eligibility.of(caller.id, entityId))?.paid === true) {
        await this.countReviewOfPayingBuyer(entityId, caller.id, correlationId);
        return foundOr404(await this.repos.reviews.findById(id), 'Review');
      }
      return review;
    } catch (err) {
      if (isDuplicateKey(err)) throw new Conflict('You have reviewed this already');
      throw err;
    }
  }

  /**
   * Active reviews, newest first, with names, each saying whether it `countsInRating`; the
   * average and `totalReviews` over the active ones that count, `pagination.total` over all
   * listed (not `findPage`: counted from the same read as the average).
   */
  async byEntity(entityType: string, entityKey: string, query: PageQuery) {
    const entityId = await this.repos.eligibility.consultationIdOf(entityKey);
    const { page, ratings } = await this.repos.reviews.activeOf(entityType, entityId, query);
    const names = await this.repos.reviewers.namesOf(page.map((r) => r.reviewerId));
    const { averageRating, totalReviews, listed } = ratingSummary(ratings);
    const reviews = page.map((r) => ({
      id: r._id,
      referenceId: r.referenceId,
      rating: r.rating,
      comment: r.comment,
      reviewerName: names.get(r.reviewerId) ?? r.reviewerNameSnapshot,
      countsInRating: countsInRating(r),
      createdAt: r.createdAt.toISOString(),
    }));
    return { reviews, averageRating, totalReviews, pagination: pagination(query, listed) };
  }

  /** The caller's review status for a consultation named by id or reference. */
  async status(caller: Pick<Caller, 'id'>, consultationKey: string) {
    const eligible = await this.repos.eligibility.of(caller.id, consultationKey);
    const hasReviewed = eligible !== null && (await this.repos.reviews.hasReviewed(caller.id, eligible.consultationId));
    return reviewStatus(eligible !== null, hasReviewed, consultationKey);
  }

  /**
   * The reviewer or an admin switches a review off (or an admin back on); averages follow — here
   * at once, at the consultation by `review.visibility_changed`, written with the change (outbox).
   */
  async setActive(caller: Pick<Caller, 'id' | 'role'>, key: string, isActive: boolean, correlationId: string): Promise<ReviewDoc> {
    const review = await this.repos.reviews.findByKey(key);
    if (!review) throw new NotFound('Review');
    const decision = decideSetActive(review, caller, isActive);
    if (decision === 'unchanged') return review;
    const changed = await this.repos.reviews.applyVisibilityChange(decision, stamp(decision.emit, correlationId));
    if (!changed) {
      const current = foundOr404(await this.repos.reviews.findById(review._id), 'Review');
      if (current.isActive === isActive) return current;
      throw new InvalidState('The review changed meanwhile; try again');
    }
    void this.outbox.flush(changed);
    this.log.info({ reviewId: review._id, isActive, sequence: decision.set.visibilityChanges }, 'review visibility changed');
    return changed;
  }

  /**
   * A buyer who has now completed a paid session of the consultation: their review written after
   * free places starts to count (a numbered visibility change, in the same write; the relay's
   * sweep sends it). A racing visibility change makes the guarded write miss: the error lets the
   * event be retried.
   */
  async countReviewOfPayingBuyer(consultationId: string, buyerId: string, correlationId: string): Promise<void> {
    const review = await this.repos.reviews.findNotCounting(consultationId, buyerId);
    if (!review) return;
    const decision = decideCountReview(review);
    if (decision === 'unchanged') return;
    const changed = await this.repos.reviews.applyVisibilityChange(decision, stamp(decision.emit, correlationId));
    if (!changed && (await this.repos.reviews.stillNotCounting(review._id)))
      throw new InvalidState('The review changed meanwhile; try again');
  }

  /**
   * A completed session — or one its seller marked no-show — makes each of its buyers eligible
   * (paid once stays paid), and a paying buyer's earlier review from a free place starts to
   * count. A repeat changes nothing.
   */
  async recordCompletedSession(data: SessionOutcome, correlationId: string): Promise<void> {
    for (const record of eligibilityFromSession(data)) {
      await this.repos.eligibility.record(record);
      if (record.paid) await this.countReviewOfPayingBuyer(record.consultationId, record.buyerId, correlationId);
    }
  }

  /** A registered user's name, for the reviews they write. */
  async recordReviewer(userId: string, fullName: string): Promise<void> {
    await this.repos.reviewers.saveName(userId, fullName);
  }
}
