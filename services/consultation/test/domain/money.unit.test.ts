import {
  applyCoupon,
  COUPON_CHECKS_PER_MINUTE,
  couponCheck,
  couponProblem,
  tooManyCouponChecks,
  UNUSABLE_COUPON,
} from '../../src/domain/coupons';
import { newDiscount } from '../../src/domain/discounts';
import { bookedAtMost, fits } from '../../src/domain/places';
import { placesByKey, slotsToList, slotsWithPlaces } from '../../src/domain/consultations';
import { CreateDiscountBody } from '@mkt/contracts';
import { consultation, discount, pricing, refusal, ruleSet, seller, buyer, T0 } from './unit-fixtures';

// Money (coupons, in minor units) and places (counters), the README's "Coupons" and "Race-free places".

describe('a coupon’s price', () => {
  test.each([
    ['no coupon', 500_00, null, { originalMinor: 500_00, savingsMinor: 0, finalMinor: 500_00 }],
    [
      '20 %',
      500_00,
      { discountType: 'Percentage', discountValue: 20 },
      { originalMinor: 500_00, savingsMinor: 100_00, finalMinor: 400_00 },
    ],
    [
      '12.5 % rounds to the santim',
      333,
      { discountType: 'Percentage', discountValue: 12.5 },
      { originalMinor: 333, savingsMinor: 42, finalMinor: 291 },
    ],
    ['100 %', 500_00, { discountType: 'Percentage', discountValue: 100 }, { originalMinor: 500_00, savingsMinor: 500_00, finalMinor: 0 }],
    [
      'fixed 150.50',
      500_00,
      { discountType: 'Fixed', discountValue: 150_50 },
      { originalMinor: 500_00, savingsMinor: 150_50, finalMinor: 349_50 },
    ],
    [
      'fixed, at most the price',
      100_00,
      { discountType: 'Fixed', discountValue: 150_00 },
      { originalMinor: 100_00, savingsMinor: 100_00, finalMinor: 0 },
    ],
  ] as const)('%s', (_case, price, coupon, quote) => {
    expect(applyCoupon(price, coupon)).toEqual(quote);
  });
});

describe('which coupons can be used (every unusable code reads the same)', () => {
  test.each([
    ['usable', discount(), null],
    ['unknown', null, UNUSABLE_COUPON],
    ['inactive', discount({ isActive: false }), UNUSABLE_COUPON],
    ['not yet valid', discount({ validFrom: new Date(T0.getTime() + 1) }), UNUSABLE_COUPON],
    ['expired', discount({ validTo: new Date(T0.getTime() - 1) }), UNUSABLE_COUPON],
    ['used up', discount({ uses: 10, maxUses: 10 }), UNUSABLE_COUPON],
    [
      'a fixed discount above the price',
      discount({ discountType: 'Fixed', discountValue: 600_00 }),
      'The discount is larger than the price',
    ],
  ] as const)('%s', (_case, coupon, problem) => {
    expect(couponProblem(coupon, 500_00, T0)).toBe(problem);
  });

  test('validate-coupon shows nothing of an unusable code, and the quote of a usable one', () => {
    expect(couponCheck(null, pricing(), T0)).toEqual({
      problem: UNUSABLE_COUPON,
      discount: null,
      quote: { originalMinor: 500_00, savingsMinor: 0, finalMinor: 500_00 },
      currency: 'ETB',
    });
    expect(couponCheck(discount(), pricing(), T0)).toMatchObject({ problem: null, quote: { finalMinor: 400_00 } });
    // Larger than the price: the coupon is shown (it exists and is usable elsewhere), with no saving.
    const large = couponCheck(discount({ discountType: 'Fixed', discountValue: 600_00 }), pricing(), T0);
    expect(large).toMatchObject({
      problem: 'The discount is larger than the price',
      discount: { _id: 'pd_1' },
      quote: { finalMinor: 500_00 },
    });
  });

  test('past 20 checks a minute: 429 with Retry-After, the seconds to the next minute', () => {
    expect(COUPON_CHECKS_PER_MINUTE).toBe(20);
    const err = tooManyCouponChecks(new Date('2030-05-01T10:00:45.000Z'), new Date('2030-05-01T10:01:00.000Z'));
    expect(err).toMatchObject({ status: 429, code: 'rate_limited', headers: { 'Retry-After': '15' } });
  });

  test('a seller’s coupon: a fixed value kept in minor units, a percentage as is; buyers make none', () => {
    const body = (fields: object) =>
      CreateDiscountBody.parse({
        name: 'Spring',
        couponCode: 'spring',
        validFrom: '2030-01-01T00:00:00.000Z',
        validTo: '2030-12-31T00:00:00.000Z',
        maxUses: 5,
        isActive: true,
        ...fields,
      });
    expect(newDiscount(seller, body({ discountType: 'Fixed', discountValue: 15.5 }))).toMatchObject({
      discountValue: 1550,
      couponCode: 'SPRING',
      uses: 0,
    });
    expect(newDiscount(seller, body({ discountType: 'Percentage', discountValue: 12.5 }))).toMatchObject({ discountValue: 12.5 });
    expect(refusal(() => newDiscount(buyer, body({ discountType: 'Percentage', discountValue: 10 })))).toEqual({
      status: 403,
      code: 'forbidden',
    });
  });
});

describe('places: the guard of a counter', () => {
  test.each([
    ['1 of 1, empty', 0, 1, 1, false, true],
    ['1 of 1, taken', 1, 1, 1, false, false],
    ['2 of 3 with 1 taken', 1, 3, 2, false, true],
    ['2 of 3 with 2 taken', 2, 3, 2, false, false],
    ['more than the capacity', 0, 2, 3, false, false],
    ['a closed slot', 0, 5, 1, true, false],
  ] as const)('%s', (_case, booked, capacity, places, closed, ok) => {
    expect(fits(booked, capacity, places, closed)).toBe(ok);
  });

  test('the filter’s bound is capacity − places, none when it can never fit', () => {
    expect(bookedAtMost(5, 2)).toBe(3);
    expect(bookedAtMost(1, 2)).toBeNull();
    expect(bookedAtMost(Number.NaN, 1)).toBeNull(); // a capacity missing from an old record fits nobody
    expect(bookedAtMost(undefined as unknown as number, 1)).toBeNull();
  });

  test('the places left of listed slots: a full day leaves none, a closed slot is full', () => {
    const offer = consultation({ maxCapacity: 2 });
    const rules = ruleSet({ metaData: { autoAccept: true, bufferTime: 0, maxBookingsPerDay: 2 } });
    const { slots, truncated } = slotsToList(offer, rules, '2030-05-13', '2030-05-14', T0);
    expect(truncated).toBe(false);
    expect(slots).toHaveLength(16);
    const bySlot = placesByKey('con_1', [
      { _id: 'con_1|2030-05-14T06:00:00.000Z', booked: 1 },
      { _id: 'con_1|2030-05-14T07:00:00.000Z', booked: 0, closed: true },
    ]);
    const byDay = placesByKey('con_1', [{ _id: 'con_1|2030-05-13', booked: 2 }]);
    const listed = slotsWithPlaces(offer, rules, slots, { bySlot, byDay });
    expect(listed.filter((s) => s.date === '2030-05-13').every((s) => s.remaining === 0)).toBe(true);
    expect(listed.filter((s) => s.date === '2030-05-14').map((s) => s.remaining)).toEqual([1, 0, 2, 2, 2, 2, 2, 2]);
    expect(listed[0]).toMatchObject({ date: '2030-05-13', startTime: '09:00', endTime: '10:00', capacity: 2 });
  });

  test('slots already begun are not listed; at most 500, then truncated', () => {
    const now = new Date('2030-05-13T06:30:00.000Z'); // 09:30 local
    expect(slotsToList(consultation(), ruleSet(), '2030-05-13', '2030-05-13', now).slots[0]!.local.startTime).toBe('10:00');
    const wide = slotsToList(consultation({ duration: 5 }), ruleSet(), '2030-05-13', '2030-05-20', T0);
    expect(wide).toMatchObject({ truncated: true });
    expect(wide.slots).toHaveLength(500);
  });
});
