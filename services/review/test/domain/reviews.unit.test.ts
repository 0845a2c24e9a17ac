import { AppError } from '@mkt/kit/domain';
import {
  buyerCounts,
  decideCreate,
  decideRecount,
  isCustomerPayment,
  isVerifiedPurchase,
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
const policy = { minPaidPercent: 50, minPaidMinor: 10_00 };
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
    expect(refusal(() => decideCreate(null, buyer, body, ids, false))).toEqual({ status: 422, code: 'not_eligible' });
  });

  test.each([
    ['a paid place', true, true],
    ['only free places', false, false],
    ['a record from before the rule (no paid field)', undefined, true],
  ])('with %s the review counts in the rating: %s', (_case, paid, counts) => {
    const eligibility = { consultationId: 'con_1', paid };
    const decision = decideCreate(eligibility, buyer, body, ids, buyerCounts(eligibility, [], policy));
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
    expect(decideCreate({ consultationId: 'con_1' }, buyer, body, ids, true).review.comment).toBe('Fish & chips <3');
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

  test('a no-show carries what each booking cost too: a seller-bought place marked absent does not count', () => {
    const noShow = { sessionId: 'ses_1', consultationId: 'con_1', buyerIds: ['puppet'], paidBuyerIds: ['puppet'] };
    const payments = [{ bookingId: 'bk_1', buyerId: 'puppet', paidMinor: 1, listMinor: 500_00 }];
    const [record] = eligibilityFromSession({ ...noShow, payments });
    expect(buyerCounts({ consultationId: 'con_1', paid: record!.paid }, record!.payments, policy)).toBe(false);
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
      from: { visibilityChanges: null },
      set: { visibilityChanges: 1 },
    });
    // A review that does not count stays out of the rating when switched.
    expect(decideSetActive(review({ countsInRating: false }), buyer, false)).toMatchObject({ set: { countsInRating: false } });
  });
});

describe('a review is recounted when what its buyer paid is known better', () => {
  test('one that did not count starts to, as a numbered change in its current state, guarded by its number', () => {
    expect(decideRecount(review({ countsInRating: false, isActive: false, visibilityChanges: 1 }), true)).toMatchObject({
      from: { visibilityChanges: 1 },
      set: { isActive: false, countsInRating: true, visibilityChanges: 2 },
      emit: { data: { isActive: false, countsInRating: true, sequence: 2 } },
    });
  });

  test('one that counted stops (the money came from the seller)', () => {
    expect(decideRecount(review({ countsInRating: true, visibilityChanges: 0 }), false)).toMatchObject({
      from: { visibilityChanges: 0 },
      set: { isActive: true, countsInRating: false, visibilityChanges: 1 },
      emit: { data: { countsInRating: false, sequence: 1 } },
    });
  });

  test('one already as the payments say (or from before the rule, counting) changes nothing', () => {
    expect(decideRecount(review({ countsInRating: true }), true)).toBe('unchanged');
    expect(decideRecount(review({ countsInRating: undefined }), true)).toBe('unchanged');
    expect(decideRecount(review({ countsInRating: false }), false)).toBe('unchanged');
  });
});

describe('whose review counts: a customer who paid enough of the list price with their own money', () => {
  const booking = (over: Partial<Parameters<typeof isCustomerPayment>[0]> = {}) => ({
    bookingId: 'bk_1',
    buyerId: buyer.id,
    paidMinor: 500_00,
    listMinor: 500_00,
    ...over,
  });

  test.each([
    ['the full price', {}, true],
    ['half the list price (the policy’s share)', { paidMinor: 250_00 }, true],
    ['a cent of 500 (a 499.99 coupon)', { paidMinor: 1 }, false],
    ['less than half the list price', { paidMinor: 249_99 }, false],
    ['half, but under the minimum amount', { paidMinor: 9_99, listMinor: 19_98 }, false],
    ['the full price, all of it sent by the seller', { sellerFundedMinor: 500_00 }, false],
    ['the full price, 300 of it sent by the seller', { sellerFundedMinor: 300_00 }, false],
    ['the full price, 200 of it sent by the seller', { sellerFundedMinor: 200_00 }, true],
    ['a capture ahead of its session (price unknown)', { paidMinor: undefined, listMinor: undefined, capturedMinor: 500_00 }, false],
  ])('%s → %s', (_case, over, expected) => {
    expect(isCustomerPayment(booking(over), policy)).toBe(expected);
  });

  test('a buyer counts when any of their priced bookings is a customer’s payment; unpriced (an older producer): paid decides', () => {
    const paid = { consultationId: 'con_1', paid: true };
    expect(buyerCounts(paid, [booking({ paidMinor: 1 })], policy)).toBe(false);
    expect(buyerCounts(paid, [booking({ paidMinor: 1 }), booking({ bookingId: 'bk_2' })], policy)).toBe(true);
    expect(buyerCounts(paid, [], policy)).toBe(true);
    expect(buyerCounts({ consultationId: 'con_1', paid: false }, [], policy)).toBe(false);
    expect(buyerCounts(null, [booking()], policy)).toBe(false);
  });

  test('a verified purchase is a customer’s payment the wallet captured', () => {
    expect(isVerifiedPurchase([booking()], policy)).toBe(false);
    expect(isVerifiedPurchase([booking({ capturedMinor: 500_00, sellerFundedMinor: 0 })], policy)).toBe(true);
    expect(isVerifiedPurchase([booking({ capturedMinor: 1, paidMinor: 1, sellerFundedMinor: 1 })], policy)).toBe(false);
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
