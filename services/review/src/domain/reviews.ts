import {
  ErrorCode,
  makeEvent,
  newInternalId,
  newUnderscoreReference,
  pageOffset,
  pagination,
  type CreateReviewBody,
  type PageQuery,
} from '@mkt/contracts';
import {
  byIdOrReference,
  Conflict,
  Forbidden,
  isDuplicateKey,
  foundOr404,
  InvalidState,
  NotFound,
  RuleViolation,
  type AuthenticatedUser,
  type Logger,
  type OutboxRelay,
} from '@mkt/kit';
import { Eligibility, Review, Reviewer, type ReviewDoc } from '../db/review.models';

/** The completed-session record of a buyer for a consultation named by id or reference. */
export async function eligibilityOf(buyerId: string, consultationKey: string) {
  return Eligibility.findOne({ buyerId, $or: [{ consultationId: consultationKey }, { consultationReferenceId: consultationKey }] }).lean();
}

/**
 * The internal id of a consultation named by id or reference. A reference is known here once a
 * session of the consultation was completed by anyone; an unknown key is returned as it is.
 */
async function consultationIdOf(key: string): Promise<string> {
  return (await Eligibility.findOne({ consultationReferenceId: key }, { consultationId: 1 }).lean())?.consultationId ?? key;
}

/** A review counts in the public rating unless it was written by a buyer who had only free places. */
function countsInRating(review: Pick<ReviewDoc, 'countsInRating'>): boolean {
  return review.countsInRating !== false;
}

/**
 * A review's next visibility change: its number, the numbered `review.visibility_changed`, and
 * the guard that no other change came first (a racing one makes the guarded write miss).
 */
function visibilityChange(review: ReviewDoc, change: { isActive: boolean; countsInRating: boolean }, correlationId: string) {
  const sequence = (review.visibilityChanges ?? 0) + 1;
  const event = makeEvent(
    'review.visibility_changed',
    { reviewId: review._id, entityType: review.entityType, entityId: review.entityId, rating: review.rating, ...change, sequence },
    { source: 'review', correlationId },
  );
  // Reviews written before the count existed have no field: their first change is 1.
  const unchanged = { visibilityChanges: review.visibilityChanges === undefined ? { $exists: false } : review.visibilityChanges };
  return { sequence, event, unchanged };
}

/**
 * A buyer who has now completed a paid session of the consultation: their review written after
 * free places only starts to count, told to the consultation as a numbered visibility change
 * (its state kept, `countsInRating: true`) in the same write (outbox; the relay's sweep sends it).
 * A racing visibility change makes the guarded update miss: the error lets the event be retried.
 */
export async function countReviewOfPayingBuyer(consultationId: string, buyerId: string, correlationId: string): Promise<void> {
  const review = await Review.findOne({
    reviewerId: buyerId,
    entityType: 'consultation_service',
    entityId: consultationId,
    countsInRating: false,
  }).lean<ReviewDoc>();
  if (!review) return;
  const { sequence, event, unchanged } = visibilityChange(review, { isActive: review.isActive, countsInRating: true }, correlationId);
  const changed = await Review.updateOne(
    { _id: review._id, countsInRating: false, ...unchanged },
    { $set: { countsInRating: true, visibilityChanges: sequence }, $push: { pendingEvents: event } },
  );
  if (changed.modifiedCount === 0 && (await Review.exists({ _id: review._id, countsInRating: false })))
    throw new InvalidState('The review changed meanwhile; try again');
}

export class Reviews {
  constructor(
    private readonly outbox: OutboxRelay,
    private readonly log: Logger,
  ) {}

  async create(user: AuthenticatedUser, body: CreateReviewBody, correlationId: string): Promise<ReviewDoc> {
    const eligible = await eligibilityOf(user.id, body.entityId);
    if (!eligible)
      throw new RuleViolation(ErrorCode.notEligible, 'Only a buyer who completed a session of this consultation may review it');
    const entityId = eligible.consultationId;
    const counts = eligible.paid !== false;
    const id = newInternalId('rev');
    const event = makeEvent(
      'review.created',
      { reviewId: id, entityType: body.entityType, entityId, rating: body.rating, countsInRating: counts },
      { source: 'review', correlationId },
    );
    try {
      const review = await Review.create({
        _id: id,
        referenceId: newUnderscoreReference('REV'),
        entityType: body.entityType,
        entityId,
        reviewerId: user.id,
        reviewerNameSnapshot: user.name,
        rating: body.rating,
        // Plain text as written: escaping belongs to whoever renders it (HTML, a PDF, a push).
        comment: body.comment,
        countsInRating: counts,
        pendingEvents: [event],
      });
      void this.outbox.flush(Review, review.toObject());
      this.log.info({ reviewId: id, entityId, rating: body.rating, countsInRating: counts }, 'review created');
      if (counts) return review.toObject();
      // A paid session completed while this was being written found no review to count: look
      // again now that it is stored (each side writes, then reads what the other wrote).
      if ((await eligibilityOf(user.id, entityId))?.paid === true) {
        await countReviewOfPayingBuyer(entityId, user.id, correlationId);
        return foundOr404(await Review.findById(id).lean<ReviewDoc>(), 'Review');
      }
      return review.toObject();
    } catch (err) {
      if (isDuplicateKey(err)) throw new Conflict('You have reviewed this already');
      throw err;
    }
  }

  /**
   * Active reviews, newest first, with names, each saying whether it `countsInRating`; the
   * average (2 decimals) and `totalReviews` over the active ones that count, `pagination.total`
   * over all listed. Not `findPage`: the totals are counted from the same read as the average,
   * so they always describe the same reviews.
   */
  async byEntity(entityType: string, entityKey: string, query: PageQuery) {
    const entityId = await consultationIdOf(entityKey);
    const filter = { entityType, entityId, isActive: true };
    const [page, ratings] = await Promise.all([
      Review.find(filter).sort({ createdAt: -1 }).skip(pageOffset(query)).limit(query.limit).lean<ReviewDoc[]>(),
      Review.find(filter, { rating: 1, countsInRating: 1 }).lean<Array<Pick<ReviewDoc, 'rating' | 'countsInRating'>>>(),
    ]);
    const names = new Map((await Reviewer.find({ _id: { $in: page.map((r) => r.reviewerId) } }).lean()).map((u) => [u._id, u.fullName]));
    const counting = ratings.filter(countsInRating);
    const totalReviews = counting.length;
    const averageRating = totalReviews === 0 ? 0 : Math.round((counting.reduce((sum, r) => sum + r.rating, 0) / totalReviews) * 100) / 100;
    const reviews = page.map((r) => ({
      id: r._id,
      referenceId: r.referenceId,
      rating: r.rating,
      comment: r.comment,
      reviewerName: names.get(r.reviewerId) ?? r.reviewerNameSnapshot,
      countsInRating: countsInRating(r),
      createdAt: r.createdAt.toISOString(),
    }));
    return { reviews, averageRating, totalReviews, pagination: pagination(query, ratings.length) };
  }

  /**
   * The caller's review status for a consultation. `consultationId` is the key exactly as the
   * caller sent it (id or reference), eligible or not: the answer never depends on, nor hints
   * at, whether anyone else completed a session of it.
   */
  async status(user: AuthenticatedUser, consultationKey: string) {
    const eligible = await eligibilityOf(user.id, consultationKey);
    const hasReviewed =
      eligible !== null &&
      (await Review.exists({ reviewerId: user.id, entityType: 'consultation_service', entityId: eligible.consultationId })) !== null;
    return {
      canReview: eligible !== null && !hasReviewed,
      hasReviewed,
      sessionCompleted: eligible !== null,
      consultationId: consultationKey,
    };
  }

  /**
   * The reviewer or an admin switches a review off (or an admin back on); averages follow — here
   * at once, at the consultation by `review.visibility_changed`, written with the change (outbox).
   * Setting the state it already has changes nothing and tells nobody.
   */
  async setActive(user: AuthenticatedUser, key: string, isActive: boolean, correlationId: string): Promise<ReviewDoc> {
    const review = await Review.findOne(byIdOrReference(key)).lean<ReviewDoc>();
    if (!review) throw new NotFound('Review');
    const admin = user.role === 'admin';
    if (!admin && user.id !== review.reviewerId) throw new Forbidden('This review is someone else’s');
    if (!admin && isActive) throw new Forbidden('Only an admin restores a review');
    if (review.isActive === isActive) return review;
    const { sequence, event, unchanged } = visibilityChange(review, { isActive, countsInRating: countsInRating(review) }, correlationId);
    // Guarded by the state read: of two racing changes one applies, the other finds it moved.
    const changed = await Review.findOneAndUpdate(
      { _id: review._id, isActive: review.isActive, ...unchanged },
      { $set: { isActive, visibilityChanges: sequence }, $push: { pendingEvents: event } },
      { new: true },
    ).lean<ReviewDoc>();
    if (!changed) {
      const current = foundOr404(await Review.findById(review._id).lean<ReviewDoc>(), 'Review');
      if (current.isActive === isActive) return current;
      throw new InvalidState('The review changed meanwhile; try again');
    }
    void this.outbox.flush(Review, changed);
    this.log.info({ reviewId: review._id, isActive, sequence }, 'review visibility changed');
    return changed;
  }
}
