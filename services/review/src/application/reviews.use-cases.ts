import {
  makeEvent,
  newInternalId,
  newUnderscoreReference,
  pagination,
  type AdminRequestContext,
  type CreateReviewBody,
  type EventData,
  type PageQuery,
} from '@mkt/contracts/review';
import { foundOr404, isDuplicateKey, NotFound } from '@mkt/kit/domain';
import type { Logger } from '@mkt/kit/logger';
import type { EligibilityRepository } from '../db/eligibility.repository';
import type { PaymentRepository } from '../db/payment.repository';
import type { ReviewDoc } from '../domain/records';
import type { ReviewerRepository, ReviewRepository } from '../db/review.repository';
import {
  adminAuditOf,
  buyerCounts,
  countsInRating,
  decideCreate,
  decideRecount,
  decideSetActive,
  eligibilityFromSession,
  isVerifiedPurchase,
  ratingSummary,
  reviewStatus,
  type Caller,
  type Emit,
  type RatingPolicy,
  type SessionOutcome,
} from '../domain/reviews';
import { AlreadyReviewed, ReviewChanged } from '../domain/errors';

export interface ReviewRepositories {
  reviews: ReviewRepository;
  eligibility: EligibilityRepository;
  reviewers: ReviewerRepository;
  payments: PaymentRepository;
}

/** How many times a recount re-reads what it decided on after its own write (a racing fact). */
const RECOUNT_ROUNDS = 3;

const stamp = <T extends Emit>(emit: T, correlationId: string) => makeEvent(emit.type, emit.data, { source: 'review', correlationId });

/** A listed review with what the listing says of it: its reviewer's name, whether it counts, whether it was paid for. */
export interface ListedReview {
  review: ReviewDoc;
  reviewerName: string;
  countsInRating: boolean;
  verifiedPurchase: boolean;
}

/**
 * The review use cases: read through the repositories, decide (domain/reviews.ts), apply with
 * one guarded write that carries the event (outbox).
 */
export class Reviews {
  constructor(
    private readonly repos: ReviewRepositories,
    private readonly log: Logger,
    private readonly policy: RatingPolicy,
  ) {}

  async create(caller: Caller, body: CreateReviewBody, correlationId: string): Promise<ReviewDoc> {
    const eligible = await this.repos.eligibility.of(caller.id, body.entityId);
    const payments = eligible ? await this.repos.payments.of(eligible.consultationId, [caller.id]) : [];
    const counts = buyerCounts(eligible, payments, this.policy);
    const ids = { id: newInternalId('rev'), referenceId: newUnderscoreReference('REV') };
    const decision = decideCreate(eligible, caller, body, ids, counts);
    const { _id: id, entityId, rating } = decision.review;
    let review: ReviewDoc;
    try {
      review = await this.repos.reviews.insert(decision, stamp(decision.emit, correlationId));
    } catch (err) {
      if (isDuplicateKey(err)) throw new AlreadyReviewed();
      throw err;
    }
    this.log.info({ reviewId: id, entityId, rating, countsInRating: counts }, 'review created');
    // A session or a capture recorded while this was being written found no review to recount:
    // look again now that it is stored (each side writes, then reads what the other wrote).
    if (await this.recount(entityId, caller.id, correlationId)) return foundOr404(await this.repos.reviews.findById(id), 'Review');
    return review;
  }

  /**
   * Active reviews, newest first, with names, each saying whether it `countsInRating`; the
   * average and `totalReviews` over the active ones that count, `pagination.total` over all
   * listed (not `findPage`: counted from the same read as the average).
   */
  async byEntity(entityType: string, entityKey: string, query: PageQuery) {
    const entityId = await this.repos.eligibility.consultationIdOf(entityKey);
    const { page, ratings } = await this.repos.reviews.activeOf(entityType, entityId, query);
    const reviewerIds = page.map((r) => r.reviewerId);
    const [names, payments] = await Promise.all([this.repos.reviewers.namesOf(reviewerIds), this.repos.payments.of(entityId, reviewerIds)]);
    const { averageRating, totalReviews, listed } = ratingSummary(ratings);
    const reviews: ListedReview[] = page.map((review) => ({
      review,
      reviewerName: names.get(review.reviewerId) ?? review.reviewerNameSnapshot,
      countsInRating: countsInRating(review),
      verifiedPurchase: isVerifiedPurchase(
        payments.filter((payment) => payment.buyerId === review.reviewerId),
        this.policy,
      ),
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
  async setActive(caller: Pick<Caller, 'id' | 'role'>, key: string, isActive: boolean, context: AdminRequestContext): Promise<ReviewDoc> {
    const correlationId = context.requestId;
    const review = await this.repos.reviews.findByKey(key);
    if (!review) throw new NotFound('Review');
    const decision = decideSetActive(review, caller, isActive);
    if (decision === 'unchanged') return review;
    // An admin's change carries its audit entry in the same write.
    const audit = adminAuditOf(decision, caller, context, new Date());
    const changed = await this.repos.reviews.applyVisibilityChange(decision, stamp(decision.emit, correlationId), audit);
    if (!changed) {
      const current = foundOr404(await this.repos.reviews.findById(review._id), 'Review');
      if (current.isActive === isActive) return current;
      throw new ReviewChanged();
    }
    this.log.info({ reviewId: review._id, isActive, sequence: decision.set.visibilityChanges }, 'review visibility changed');
    return changed;
  }

  /**
   * Brings the buyer's review of the consultation in line with what their eligibility and
   * payments now say (`buyerCounts`): it starts to count, or stops, as a numbered visibility
   * change in the same write (the relay's sweep sends it). After its own write it reads the facts
   * again (one recorded meanwhile by another event is not lost); a racing change of the review
   * makes the guarded write miss, and the error lets the event be retried. True when it changed.
   */
  async recount(consultationId: string, buyerId: string, correlationId: string): Promise<boolean> {
    let changedAny = false;
    for (let round = 0; round < RECOUNT_ROUNDS; round += 1) {
      const review = await this.repos.reviews.findOf(consultationId, buyerId);
      if (!review) return changedAny;
      const [eligible, payments] = await Promise.all([
        this.repos.eligibility.of(buyerId, consultationId),
        this.repos.payments.of(consultationId, [buyerId]),
      ]);
      const counts = buyerCounts(eligible, payments, this.policy);
      const decision = decideRecount(review, counts);
      if (decision === 'unchanged') return changedAny;
      const changed = await this.repos.reviews.applyVisibilityChange(decision, stamp(decision.emit, correlationId));
      if (!changed) {
        const current = await this.repos.reviews.findById(review._id);
        if (current && countsInRating(current) === counts) return changedAny;
        throw new ReviewChanged();
      }
      changedAny = true;
      this.log.info({ reviewId: review._id, countsInRating: counts, sequence: decision.set.visibilityChanges }, 'review recounted');
    }
    return changedAny;
  }

  /**
   * A completed session — or one its seller marked no-show — makes each of its buyers eligible
   * (paid once stays paid), records what each paid booking cost against its list price, and
   * recounts each buyer's review. A repeat changes nothing.
   */
  async recordCompletedSession(data: SessionOutcome, correlationId: string): Promise<void> {
    for (const record of eligibilityFromSession(data)) {
      await this.repos.eligibility.record(record);
      for (const payment of record.payments) await this.repos.payments.recordPriced(payment);
      await this.recount(record.consultationId, record.buyerId, correlationId);
    }
  }

  /**
   * The wallet captured a paid booking: what it captured and how much of it the buyer had
   * received from the seller. Once the booking's session is known here, the buyer's review is
   * recounted (money that came from the seller is no customer's payment).
   */
  async recordCapture(data: EventData<'wallet.booking_payment.captured'>, correlationId: string): Promise<void> {
    const payment = await this.repos.payments.recordCaptured({
      bookingId: data.bookingId,
      buyerId: data.buyerId,
      capturedMinor: data.amountMinor,
      sellerFundedMinor: data.sellerFundedMinor ?? 0,
    });
    if (payment.consultationId) await this.recount(payment.consultationId, payment.buyerId, correlationId);
  }

  /** A registered user's name, for the reviews they write. */
  async recordReviewer(userId: string, fullName: string): Promise<void> {
    await this.repos.reviewers.saveName(userId, fullName);
  }
}
