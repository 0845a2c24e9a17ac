import { AppError } from '@mkt/kit';
import {
  decideCountReview,
  decideCreate,
  decideSetActive,
  eligibilityFromSession,
  ratingSummary,
  reviewStatus,
  type ReviewState,
} from '../../src/domain/reviews';

const buyer = { id: 'u-buyer', role: 'buyer', name: 'Sara T' };
const admin = { id: 'u-admin', role: 'admin', name: 'Admin' };
const body = { entityType: 'consultation_service' as const, entityId: 'MKT-CON-AAAAAAAA', rating: 4, comment: 'Fish & chips <3' };
const ids = { id: 'rev_1', referenceId: 'REV_1' };
const review = (over: Partial<ReviewState> = {}): ReviewState => ({
  _id: 'rev_1',
  entityType: 'consultation_service',
  entityId: 'con_1',
  reviewerId: buyer.id,
  rating: 4,
  isActive: true,
  visibilityChanges: 0,
  ...over,
});
const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? { status: err.status, code: err.code } : err;
  }
  return 'decided';
};

describe('who may review: a completed session of the consultation', () => {
  test('without one: 422 not_eligible', () => {
    expect(refusal(() => decideCreate(null, buyer, body, ids))).toEqual({ status: 422, code: 'not_eligible' });
  });

  test.each([
    ['a paid place', true, true],
    ['only free places', false, false],
    ['a record from before the rule (no paid field)', undefined, true],
  ])('with %s the review counts in the rating: %s', (_case, paid, counts) => {
    const decision = decideCreate({ consultationId: 'con_1', paid }, buyer, body, ids);
    expect(decision.review).toMatchObject({
      entityId: 'con_1',
      countsInRating: counts,
      reviewerId: buyer.id,
      reviewerNameSnapshot: 'Sara T',
    });
    expect(decision.emit).toEqual({
      type: 'review.created',
      data: { reviewId: 'rev_1', entityType: 'consultation_service', entityId: 'con_1', rating: 4, countsInRating: counts },
    });
  });

  test('the comment is kept as written (escaping is the renderer’s)', () => {
    expect(decideCreate({ consultationId: 'con_1' }, buyer, body, ids).review.comment).toBe('Fish & chips <3');
  });
});

describe('eligibility from a completed session', () => {
  const data = {
    sessionId: 'ses_1',
    consultationId: 'con_1',
    consultationReferenceId: 'MKT-CON-A',
    sellerId: 's',
    endedAt: '2026-11-26T07:00:00.000Z',
  };
  test('each buyer, paid as paidBuyerIds says; absent (an older producer): every buyer paid', () => {
    expect(eligibilityFromSession({ ...data, buyerIds: ['a', 'b'], paidBuyerIds: ['a'] }).map((r) => [r.key, r.paid])).toEqual([
      ['con_1|a', true],
      ['con_1|b', false],
    ]);
    expect(eligibilityFromSession({ ...data, buyerIds: ['a', 'b'] }).map((r) => r.paid)).toEqual([true, true]);
  });
});

describe('switching a review on and off', () => {
  test.each([
    ['the reviewer switches theirs off', buyer, review(), false, 'change'],
    ['an admin switches one off', admin, review(), false, 'change'],
    ['an admin restores one', admin, review({ isActive: false }), true, 'change'],
    ['the reviewer may not restore', buyer, review({ isActive: false }), true, 403],
    ['someone else may not switch it off', { id: 'u-other', role: 'buyer' }, review(), false, 403],
    ['the state it already has changes nothing', buyer, review({ isActive: false }), false, 'unchanged'],
  ] as const)('%s', (_case, caller, state, isActive, expected) => {
    let outcome: unknown;
    try {
      const decision = decideSetActive(state, caller, isActive);
      outcome = decision === 'unchanged' ? 'unchanged' : 'change';
    } catch (err) {
      outcome = (err as AppError).status;
    }
    expect(outcome).toBe(expected);
  });

  test('a change is numbered and guarded by the state read; a review from before the count is change 1', () => {
    expect(decideSetActive(review({ visibilityChanges: 2 }), buyer, false)).toMatchObject({
      from: { isActive: true, visibilityChanges: 2 },
      set: { isActive: false, countsInRating: true, visibilityChanges: 3 },
      emit: { type: 'review.visibility_changed', data: { reviewId: 'rev_1', isActive: false, countsInRating: true, sequence: 3 } },
    });
    expect(decideSetActive(review({ visibilityChanges: undefined }), buyer, false)).toMatchObject({
      from: { visibilityChanges: { $exists: false } },
      set: { visibilityChanges: 1 },
    });
    // A review that does not count stays out of the rating when switched.
    expect(decideSetActive(review({ countsInRating: false }), buyer, false)).toMatchObject({ set: { countsInRating: false } });
  });
});

describe('a paying buyer’s review from a free place starts to count', () => {
  test('as a numbered change in its current state, guarded by its not counting yet', () => {
    expect(decideCountReview(review({ countsInRating: false, isActive: false, visibilityChanges: 1 }))).toMatchObject({
      from: { countsInRating: false, visibilityChanges: 1 },
      set: { isActive: false, countsInRating: true, visibilityChanges: 2 },
      emit: { data: { isActive: false, countsInRating: true, sequence: 2 } },
    });
  });

  test('one that counts already (or from before the rule) changes nothing', () => {
    expect(decideCountReview(review({ countsInRating: true }))).toBe('unchanged');
    expect(decideCountReview(review({ countsInRating: undefined }))).toBe('unchanged');
  });
});

describe('the rating of an entity', () => {
  test.each([
    [[], { averageRating: 0, totalReviews: 0, listed: 0 }],
    [[{ rating: 5 }, { rating: 4 }, { rating: 4 }], { averageRating: 4.33, totalReviews: 3, listed: 3 }],
    [[{ rating: 5 }, { rating: 1, countsInRating: false }], { averageRating: 5, totalReviews: 1, listed: 2 }],
    [[{ rating: 2, countsInRating: false }], { averageRating: 0, totalReviews: 0, listed: 1 }],
  ])('%j → %j (2 decimals, over the reviews that count; listed over all)', (ratings, summary) => {
    expect(ratingSummary(ratings)).toEqual(summary);
  });
});

describe('the caller’s review status', () => {
  test.each([
    [false, false, { canReview: false, hasReviewed: false, sessionCompleted: false }],
    [true, false, { canReview: true, hasReviewed: false, sessionCompleted: true }],
    [true, true, { canReview: false, hasReviewed: true, sessionCompleted: true }],
  ])('eligible %s, reviewed %s', (eligible, reviewed, status) => {
    expect(reviewStatus(eligible, reviewed, 'MKT-CON-A')).toEqual({ ...status, consultationId: 'MKT-CON-A' });
  });
});
