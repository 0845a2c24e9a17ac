import {
  adminActionData,
  makeEvent,
  type AdminRequestContext,
  type CreateReviewBody,
  type EventData,
  type EventType,
  type IntegrationEvent,
} from '@mkt/contracts/review';
import { Forbidden } from '@mkt/kit/domain';
import { NotEligibleToReview } from './errors';
import type { PaymentDoc, ReviewDoc } from './records';

/**
 * The review service's rules, pure: given what was read and the command, each function returns
 * the decision (the guarded write to make, the event to emit) or throws the rule it breaks.
 * No database, no clock, no ids: the application reads, decides here, and applies through the
 * repositories (db/).
 */

/** A review as the rules see it: the stored record's fields the rules read. */
export type ReviewState = Pick<ReviewDoc, '_id' | 'entityType' | 'entityId' | 'reviewerId' | 'rating' | 'isActive' | 'countsInRating'> & {
  /** Absent (written before the count existed): no change yet. */
  visibilityChanges?: number;
};

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
 * What a buyer must have paid of their own for their review to count: at least
 * `minPaidPercent` % of the booking's list price, and at least `minPaidMinor`.
 */
export interface RatingPolicy {
  minPaidPercent: number;
  minPaidMinor: number;
}

/**
 * One paid booking as review knows it: what it cost and its list price (from
 * `consultation.session.completed`'s `payments`), and, once the wallet captured it, how much of
 * it the buyer had received from the seller (`wallet.booking_payment.captured`).
 */
export type PaymentState = Omit<PaymentDoc, '_id'> & { bookingId: string };

/**
 * A paid booking is a customer's payment when what the buyer paid of their own — the booking's
 * price after coupons, less what the seller had transferred to them — is at least the policy's
 * share of the list price and its minimum. Unknown price (a capture ahead of its session): not yet.
 */
export function isCustomerPayment(payment: PaymentState, policy: RatingPolicy): boolean {
  if (payment.paidMinor === undefined || payment.listMinor === undefined) return false;
  const own = payment.paidMinor - Math.min(payment.sellerFundedMinor ?? 0, payment.paidMinor);
  return own >= policy.minPaidMinor && own * 100 >= policy.minPaidPercent * payment.listMinor;
}

/**
 * Whether a buyer's review of a consultation counts: they completed a session, paid for a place
 * (`paid`), and — when the producer told what each booking cost (`payments`) — at least one of
 * their bookings is a customer's payment. Without any priced booking (an older producer) `paid`
 * alone decides.
 */
export function buyerCounts(eligibility: EligibilityState | null, payments: readonly PaymentState[], policy: RatingPolicy): boolean {
  if (!eligibility || eligibility.paid === false) return false;
  const priced = payments.filter((payment) => payment.paidMinor !== undefined);
  return priced.length === 0 || priced.some((payment) => isCustomerPayment(payment, policy));
}

/**
 * A verified purchase: a customer's payment the wallet captured (the money reached the seller,
 * and the part the seller had sent the buyer is known). Listed with each review.
 */
export function isVerifiedPurchase(payments: readonly PaymentState[], policy: RatingPolicy): boolean {
  return payments.some((payment) => payment.capturedMinor !== undefined && isCustomerPayment(payment, policy));
}

/**
 * A review's next visibility change: its number, the numbered `review.visibility_changed`, and
 * the guard that no other change came first (a racing one makes the guarded write miss).
 */
export interface VisibilityChange {
  reviewId: string;
  /**
   * The guard, the state read: a racing change (which numbers itself too) makes the write miss.
   * `visibilityChanges: null` expects a review not yet counted (written before the count existed).
   */
  from: { isActive?: boolean; visibilityChanges: number | null };
  set: { isActive: boolean; countsInRating: boolean; visibilityChanges: number };
  emit: Emit<'review.visibility_changed'>;
}

function visibilityChange(
  review: ReviewState,
  change: { isActive: boolean; countsInRating: boolean },
  guard: Pick<VisibilityChange['from'], 'isActive'>,
): VisibilityChange {
  const sequence = (review.visibilityChanges ?? 0) + 1;
  return {
    reviewId: review._id,
    // Reviews written before the count existed have no field: their first change is 1.
    from: { ...guard, visibilityChanges: review.visibilityChanges ?? null },
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
  counts: boolean,
): CreateDecision {
  if (!eligibility) throw new NotEligibleToReview();
  const entityId = eligibility.consultationId;
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
 * What the buyer's payments now say about their review (`buyerCounts`): a review that does not
 * count starts to (a paid session completed), one that counts stops (the wallet found the money
 * came from the seller) — told as a numbered visibility change in its current state, guarded by
 * its number (a racing change makes the write miss).
 */
export function decideRecount(review: ReviewState, counts: boolean): VisibilityChange | 'unchanged' {
  if (countsInRating(review) === counts) return 'unchanged';
  return visibilityChange(review, { isActive: review.isActive, countsInRating: counts }, {});
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
    payments: (data.payments ?? [])
      .filter((payment) => payment.buyerId === buyerId)
      .map((payment) => ({ ...payment, consultationId: data.consultationId })),
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

/**
 * An admin's hide or restore of a review carries its audit entry (`review.admin_action.recorded`),
 * pushed by the change's own guarded write: a change that misses, or a repeat that changes
 * nothing (`unchanged`), records nothing. The reviewer's own hide is not an admin action.
 */
export function adminAuditOf(
  change: VisibilityChange,
  caller: Pick<Caller, 'id' | 'role'>,
  context: AdminRequestContext,
  now: Date,
): IntegrationEvent | null {
  if (caller.role !== 'admin') return null;
  const data = adminActionData(
    { id: caller.id, role: 'admin' },
    change.set.isActive ? 'review.restore' : 'review.hide',
    { type: 'review', id: change.reviewId },
    context,
    now,
    { before: { isActive: !change.set.isActive }, after: { isActive: change.set.isActive, sequence: change.set.visibilityChanges } },
  );
  return makeEvent('review.admin_action.recorded', data, { source: 'review', correlationId: context.requestId });
}
