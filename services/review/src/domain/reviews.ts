import { ErrorCode, type CreateReviewBody, type EventData, type EventType } from '@mkt/contracts';
import { Forbidden, RuleViolation } from '@mkt/kit/domain';

/**
 * The review service's rules, pure: given what was read and the command, each function returns
 * the decision (the guarded write to make, the event to emit) or throws the rule it breaks.
 * No database, no clock, no ids: the application reads, decides here, and applies through the
 * repositories (db/).
 */

/** A review as the rules see it. */
export interface ReviewState {
  _id: string;
  entityType: string;
  entityId: string;
  reviewerId: string;
  rating: number;
  isActive: boolean;
  /** Absent (written before the rule): counts. */
  countsInRating?: boolean;
  /** Absent (written before the count existed): no change yet. */
  visibilityChanges?: number;
}

/** Who completed a session of which consultation, and whether they ever paid for a place. */
export interface EligibilityState {
  consultationId: string;
  /** Absent (recorded before the rule): paid. */
  paid?: boolean;
}

export interface Caller {
  id: string;
  role: string;
  name: string;
}

/** An event to emit with the write: its type and data (the application stamps id and time). */
export interface Emit<T extends EventType = EventType> {
  type: T;
  data: EventData<T>;
}

/** A review counts in the public rating unless it was written by a buyer who had only free places. */
export function countsInRating(review: Pick<ReviewState, 'countsInRating'>): boolean {
  return review.countsInRating !== false;
}

/**
 * A review's next visibility change: its number, the numbered `review.visibility_changed`, and
 * the guard that no other change came first (a racing one makes the guarded write miss).
 */
export interface VisibilityChange {
  reviewId: string;
  /** The guard, the state read: a racing change (which numbers itself too) makes the write miss. */
  from: { isActive?: boolean; countsInRating?: false; visibilityChanges: number | { $exists: false } };
  set: { isActive: boolean; countsInRating: boolean; visibilityChanges: number };
  emit: Emit<'review.visibility_changed'>;
}

function visibilityChange(
  review: ReviewState,
  change: { isActive: boolean; countsInRating: boolean },
  guard: Pick<VisibilityChange['from'], 'isActive' | 'countsInRating'>,
): VisibilityChange {
  const sequence = (review.visibilityChanges ?? 0) + 1;
  return {
    reviewId: review._id,
    // Reviews written before the count existed have no field: their first change is 1.
    from: { ...guard, visibilityChanges: review.visibilityChanges === undefined ? { $exists: false } : review.visibilityChanges },
    set: { ...change, visibilityChanges: sequence },
    emit: {
      type: 'review.visibility_changed',
      data: { reviewId: review._id, entityType: review.entityType, entityId: review.entityId, rating: review.rating, ...change, sequence },
    },
  };
}

/** A new review: who may write it (a completed session) and whether it counts (a paid place). */
export interface CreateDecision {
  review: {
    _id: string;
    referenceId: string;
    entityType: string;
    entityId: string;
    reviewerId: string;
    reviewerNameSnapshot: string;
    rating: number;
    comment: string;
    countsInRating: boolean;
  };
  emit: Emit<'review.created'>;
}

export function decideCreate(
  eligibility: EligibilityState | null,
  caller: Caller,
  body: CreateReviewBody,
  ids: { id: string; referenceId: string },
): CreateDecision {
  if (!eligibility)
    throw new RuleViolation(ErrorCode.notEligible, 'Only a buyer who completed a session of this consultation may review it');
  const entityId = eligibility.consultationId;
  const counts = eligibility.paid !== false;
  return {
    review: {
      _id: ids.id,
      referenceId: ids.referenceId,
      entityType: body.entityType,
      entityId,
      reviewerId: caller.id,
      reviewerNameSnapshot: caller.name,
      rating: body.rating,
      // Plain text as written: escaping belongs to whoever renders it (HTML, a PDF, a push).
      comment: body.comment,
      countsInRating: counts,
    },
    emit: {
      type: 'review.created',
      data: { reviewId: ids.id, entityType: body.entityType, entityId, rating: body.rating, countsInRating: counts },
    },
  };
}

/**
 * The reviewer or an admin switches a review off, only an admin back on. Setting the state it
 * already has changes nothing and tells nobody (`unchanged`).
 */
export function decideSetActive(
  review: ReviewState,
  caller: Pick<Caller, 'id' | 'role'>,
  isActive: boolean,
): VisibilityChange | 'unchanged' {
  const admin = caller.role === 'admin';
  if (!admin && caller.id !== review.reviewerId) throw new Forbidden('This review is someone else’s');
  if (!admin && isActive) throw new Forbidden('Only an admin restores a review');
  if (review.isActive === isActive) return 'unchanged';
  return visibilityChange(review, { isActive, countsInRating: countsInRating(review) }, { isActive: review.isActive });
}

/**
 * A buyer who has now completed a paid session: their review written after free places only
 * starts to count, told as a numbered visibility change in its current state.
 */
export function decideCountReview(review: ReviewState): VisibilityChange | 'unchanged' {
  if (countsInRating(review)) return 'unchanged';
  return visibilityChange(review, { isActive: review.isActive, countsInRating: true }, { countsInRating: false });
}

/** What eligibility reads of a completed session or of a no-show. */
export type SessionOutcome = EventData<'consultation.session.completed'> | EventData<'consultation.session.no_show'>;

/**
 * A completed session (or a no-show: the buyer marked absent may still review it) makes each
 * of its buyers eligible: whether each paid for their place (`paidBuyerIds`; absent from an
 * older producer: all did). Paid once stays paid (applied by the repository: a free place
 * never takes back what a paid one gave).
 */
export function eligibilityFromSession(data: SessionOutcome) {
  return data.buyerIds.map((buyerId) => ({
    key: `${data.consultationId}|${buyerId}`,
    consultationId: data.consultationId,
    consultationReferenceId: data.consultationReferenceId ?? null,
    buyerId,
    sessionId: data.sessionId,
    paid: data.paidBuyerIds?.includes(buyerId) ?? true,
  }));
}
export type EligibilityRecord = ReturnType<typeof eligibilityFromSession>[number];

/**
 * `averageRating` (2 decimals) and `totalReviews` over the listed reviews that count in the
 * rating; `listed` over all (the page's total).
 */
export function ratingSummary(ratings: ReadonlyArray<Pick<ReviewState, 'rating' | 'countsInRating'>>) {
  const counting = ratings.filter(countsInRating);
  const totalReviews = counting.length;
  const averageRating = totalReviews === 0 ? 0 : Math.round((counting.reduce((sum, r) => sum + r.rating, 0) / totalReviews) * 100) / 100;
  return { averageRating, totalReviews, listed: ratings.length };
}

/**
 * The caller's review status. `consultationId` is the key exactly as sent (id or reference),
 * eligible or not: the answer never depends on, nor hints at, whether anyone else completed a
 * session of it.
 */
export function reviewStatus(eligible: boolean, hasReviewed: boolean, consultationKey: string) {
  return { canReview: eligible && !hasReviewed, hasReviewed, sessionCompleted: eligible, consultationId: consultationKey };
}
