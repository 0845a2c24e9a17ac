import { makeEvent } from '@mkt/contracts';
import { reviewsConsumer } from '../src/events/reviews.consumer';
import { admin, as, bookingBody, daysAhead, givenOffer, listenFor, log, newUser, useConsultationApp, models } from './harness';

const app = useConsultationApp();

describe('booking', () => {
  test('a slot of the schedule, at the server’s price, is Confirmed, joins a session and is announced', async () => {
    const events = await listenFor(['consultation.booking.confirmed']);
    const offer = await givenOffer(app);
    const buyer = newUser();
    const res = await as(app, buyer)('POST', '/consultations/bookings', bookingBody(offer));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      status: 'Confirmed',
      consultationTitle: 'Career coaching',
      date: daysAhead(7),
      startTime: '10:00',
      endTime: '11:00',
      totalAmount: 500,
      currency: 'ETB',
    });
    expect(res.body.data.referenceId).toMatch(/^BK_[A-Z0-9]{8}$/);
    const event = await events.waitFor((e) => e.data.bookingId === res.body.data.bookingId);
    expect(event.data).toMatchObject({
      consultationId: offer.consultationId,
      sellerId: offer.seller.id,
      buyerId: buyer.id,
      totalAmountMinor: 50000,
      currency: 'ETB',
      date: daysAhead(7),
      startTime: '10:00',
    });
    await events.settle();
    expect(events.seen.filter((e) => e.data.bookingId === res.body.data.bookingId)).toHaveLength(1);
    await events.close();

    const sessions = await as(app, offer.seller)('GET', '/consultations/sessions');
    expect(sessions.body.data.sessions[0]).toMatchObject({
      consultationTitle: 'Career coaching',
      status: 'Scheduled',
      participantCount: 1,
    });
    const mine = await as(app, buyer)('GET', '/consultations/bookings');
    expect(mine.body.data.bookings).toEqual([
      expect.objectContaining({ id: res.body.data.bookingId, status: 'Confirmed', totalAmount: 500 }),
    ]);
    expect((await as(app, newUser())('GET', '/consultations/bookings')).body.data.bookings).toEqual([]);
    const slots = await as(app, undefined)('GET', `/consultations/${offer.consultationId}/slots?from=${daysAhead(7)}&to=${daysAhead(7)}`);
    expect(slots.body.data.slots.find((s: { startTime: string }) => s.startTime === '10:00')).toMatchObject({ remaining: 0, capacity: 1 });
    expect(slots.body.data.slots.find((s: { startTime: string }) => s.startTime === '11:00')).toMatchObject({
      remaining: 1,
      endTime: '12:00',
    });
    expect(slots.body.data.slots).toHaveLength(8);
  });

  test.each([
    ['a time off the schedule', { startTime: '10:30', endTime: '11:30' }, 'slot_unavailable'],
    ['an end that is not start + duration', { endTime: '12:00' }, 'slot_unavailable'],
    ['outside the hours', { startTime: '18:00', endTime: '19:00' }, 'slot_unavailable'],
    ['a past date', { date: '2020-01-06' }, 'slot_unavailable'],
    ['a lower total', { totalAmount: 1 }, 'price_mismatch'],
    ['a lower subTotal', { subTotal: 400 }, 'price_mismatch'],
    ['another currency', { currency: 'USD' }, 'price_mismatch'],
    ['an unknown coupon', { couponCode: 'NOPE' }, 'coupon_invalid'],
    [
      'more participants than places',
      {
        participants: [
          { fullName: 'A', email: 'a@b.co', phone: '+251911000000' },
          { fullName: 'B', email: 'b@b.co', phone: '+251911000001' },
        ],
        subTotal: 1000,
        totalAmount: 1000,
      },
      'slot_unavailable',
    ],
  ])('%s is 422 %s and books nothing', async (_name, overrides, code) => {
    const offer = await givenOffer(app);
    const res = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, overrides));
    expect(res.status).toBe(422);
    expect(res.body.errors[0].code).toBe(code);
    expect(await models().Booking.countDocuments({ consultationId: offer.consultationId })).toBe(0);
    expect(await models().SlotPlace.countDocuments({ consultationId: offer.consultationId, booked: { $gt: 0 } })).toBe(0);
  });

  test('an unlisted consultation is 404 to buyers (like an unknown one), 422 not_bookable to its seller and admins', async () => {
    const pending = await givenOffer(app, { approve: false });
    const stranger = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(pending));
    const unknown = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(pending, { consultationId: 'con_nothing00' }));
    expect([stranger.status, unknown.status]).toEqual([404, 404]);
    expect(stranger.body).toEqual(unknown.body);
    expect((await as(app, admin)('POST', '/consultations/bookings', bookingBody(pending))).body.errors[0].code).toBe('not_bookable');
    expect((await as(app, pending.seller)('POST', '/consultations/bookings', bookingBody(pending))).body.errors[0].code).toBe(
      'not_bookable',
    );
    // Hidden again after an edit of a bookable field: gone for buyers too.
    const offer = await givenOffer(app);
    expect((await as(app, offer.seller)('PUT', `/consultations/${offer.consultationId}`, { duration: 30 })).status).toBe(200);
    expect((await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer))).status).toBe(404);
    expect(await models().Booking.countDocuments({ consultationId: { $in: [pending.consultationId, offer.consultationId] } })).toBe(0);
  });

  test('a seller does not book their own; a SellerId or ruleSetId not the consultation’s is 422, a malformed body 400', async () => {
    const offer = await givenOffer(app);
    const other = await givenOffer(app);
    expect((await as(app, offer.seller)('POST', '/consultations/bookings', bookingBody(offer))).status).toBe(403);
    // Schema-valid, but against the stored consultation: a rule (422).
    for (const [path, overrides] of [
      ['SellerId', { SellerId: newUser().id }],
      ['ruleSetId', { ruleSetId: other.ruleSetId }],
    ] as const) {
      const res = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, overrides));
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([expect.objectContaining({ path, code: 'invalid' })]);
    }
    // Against the schema (minItems 1): 400.
    const noOne = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, { participants: [] }));
    expect(noOne.status).toBe(400);
    expect(noOne.body.errors).toEqual([expect.objectContaining({ path: 'participants', code: 'invalid' })]);
    expect((await as(app, undefined)('POST', '/consultations/bookings', bookingBody(offer))).status).toBe(401);
    expect(await models().Booking.countDocuments({ consultationId: offer.consultationId })).toBe(0);
  });

  test.each([
    ['subTotal', { subTotal: 500.001 }],
    ['totalAmount', { totalAmount: '500.00' }],
    ['totalAmount', { totalAmount: -1 }],
    ['subTotal', { subTotal: 1e21 }],
  ])('bad money in %s is 400 from validation, naming the field, and books nothing', async (field, overrides) => {
    const offer = await givenOffer(app);
    const res = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, overrides));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: field, code: 'invalid' })]);
    expect(await models().Booking.countDocuments({ consultationId: offer.consultationId })).toBe(0);
  });

  test('50 concurrent bookings of the one place: exactly 1 Confirmed, 49 × 422', async () => {
    const offer = await givenOffer(app);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer))),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 422 && r.body.errors[0].code === 'slot_unavailable')).toHaveLength(49);
    expect(await models().Booking.countDocuments({ consultationId: offer.consultationId, status: 'Confirmed' })).toBe(1);
  });

  test('a group session fills to its capacity and its participants share one session', async () => {
    const offer = await givenOffer(app, { capacity: 3 });
    const two = [
      { fullName: 'A', email: 'a@b.co', phone: '+251911000000' },
      { fullName: 'B', email: 'b@b.co', phone: '+251911000001' },
    ];
    expect(
      (
        await as(app, newUser())(
          'POST',
          '/consultations/bookings',
          bookingBody(offer, { participants: two, subTotal: 1000, totalAmount: 1000 }),
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await as(app, newUser())(
          'POST',
          '/consultations/bookings',
          bookingBody(offer, { participants: two, subTotal: 1000, totalAmount: 1000 }),
        )
      ).status,
    ).toBe(422);
    expect((await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer))).status).toBe(200);
    const sessions = await as(app, offer.seller)('GET', '/consultations/sessions');
    expect(sessions.body.data.sessions).toHaveLength(1);
    expect(sessions.body.data.sessions[0].participantCount).toBe(3);
  });

  test('the day’s booking limit holds', async () => {
    const offer = await givenOffer(app, { maxBookingsPerDay: 2 });
    const at = (startTime: string, endTime: string) =>
      as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, { startTime, endTime }));
    expect((await at('09:00', '10:00')).status).toBe(200);
    expect((await at('10:00', '11:00')).status).toBe(200);
    const third = await at('11:00', '12:00');
    expect(third.status).toBe(422);
    expect(third.body.errors[0].code).toBe('slot_unavailable');
    expect((await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, { date: daysAhead(8) }))).status).toBe(200);
  });
});

describe('cancelling', () => {
  test('frees the place for someone else, refunds up to what was paid, and only once', async () => {
    const events = await listenFor(['consultation.booking.cancelled']);
    const offer = await givenOffer(app);
    const buyer = newUser();
    const booked = await as(app, buyer)('POST', '/consultations/bookings', bookingBody(offer));
    const cancel = (user = buyer, body: object = {}) =>
      as(app, user)('POST', '/consultations/bookings/cancel', { bookingId: booked.body.data.bookingId, reason: 'Sick', ...body });
    expect((await cancel(newUser())).status).toBe(403);
    expect((await cancel(buyer, { refundAmount: 500.01 })).body.errors[0].code).toBe('refund_too_large');
    const badMoney = await cancel(buyer, { refundAmount: 1.234 });
    expect(badMoney.status).toBe(400);
    expect(badMoney.body.errors[0]).toMatchObject({ path: 'refundAmount', code: 'invalid' });
    const res = await cancel(buyer, { refundAmount: 400 });
    expect(res.body.data).toMatchObject({
      bookingId: booked.body.data.bookingId,
      status: 'Cancelled',
      refundStatus: 'Pending',
      refundAmount: 400,
    });
    expect(Date.parse(res.body.data.cancelledAt)).not.toBeNaN();
    expect((await cancel()).status).toBe(409);
    expect((await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer))).status).toBe(200);
    const event = await events.waitFor((e) => e.data.bookingId === booked.body.data.bookingId);
    expect(event.data).toMatchObject({ sellerId: offer.seller.id, buyerId: buyer.id, refundAmountMinor: 40000 });
    await events.close();
  });

  test('the seller may cancel too; an unknown booking is 404', async () => {
    const offer = await givenOffer(app);
    const booked = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer));
    const res = await as(app, offer.seller)('POST', '/consultations/bookings/cancel', { bookingId: booked.body.data.referenceId });
    expect(res.body.data).toMatchObject({ status: 'Cancelled', refundAmount: 500 });
    expect((await as(app, offer.seller)('POST', '/consultations/bookings/cancel', { bookingId: 'bk_nothing' })).status).toBe(404);
  });
});

describe('coupons', () => {
  async function givenCoupon(offer: Awaited<ReturnType<typeof givenOffer>>, overrides: object = {}) {
    return as(app, offer.seller)('POST', '/consultations/pricing/promotional-discounts', {
      name: 'Launch',
      description: '20% off',
      discountType: 'Percentage',
      discountValue: 20,
      validFrom: new Date(Date.now() - 86_400_000).toISOString(),
      validTo: new Date(Date.now() + 86_400_000).toISOString(),
      couponCode: 'launch20',
      maxUses: 1,
      isActive: true,
      ...overrides,
    });
  }

  test('validate-coupon quotes the price; unknown, expired or inactive coupons are valid: false with a reason', async () => {
    const offer = await givenOffer(app);
    const created = await givenCoupon(offer);
    expect(created.body.data).toMatchObject({ name: 'Launch', couponCode: 'LAUNCH20', discountValue: 20, isActive: true });
    expect(created.body.data.referenceId).toMatch(/^PD_[A-Z0-9]{8}$/);
    expect((await givenCoupon(offer)).status).toBe(409);
    const validate = (couponCode: string) =>
      as(app, newUser())('POST', '/consultations/pricing/promotional-discounts/validate-coupon', {
        couponCode,
        consultationId: offer.consultationId,
      });
    expect((await validate('launch20')).body.data).toMatchObject({
      valid: true,
      discountType: 'Percentage',
      discountValue: 20,
      originalPrice: 500,
      savings: 100,
      finalPrice: 400,
    });
    expect((await validate('NOPE')).body.data).toMatchObject({
      valid: false,
      reason: 'This coupon code cannot be used',
      finalPrice: 500,
      savings: 0,
    });
    await givenCoupon(offer, { couponCode: 'OLD', validFrom: '2020-01-01T00:00:00Z', validTo: '2020-02-01T00:00:00Z' });
    expect((await validate('OLD')).body.data).toMatchObject({ valid: false, reason: 'This coupon code cannot be used' });
    await givenCoupon(offer, { couponCode: 'OFF', isActive: false });
    expect((await validate('OFF')).body.data).toMatchObject({ valid: false, reason: 'This coupon code cannot be used' });
    await givenCoupon(offer, { couponCode: 'BIG', discountType: 'Fixed', discountValue: 600 });
    expect((await validate('BIG')).body.data).toMatchObject({ valid: false });
    // Schema-valid bodies that break a rule between fields: 422, naming the field, nothing created.
    for (const [path, overrides] of [
      ['discountValue', { couponCode: 'PCT', discountValue: 120 }],
      ['validTo', { couponCode: 'BACK', validTo: '2020-01-01T00:00:00Z' }],
    ] as const) {
      const res = await givenCoupon(offer, overrides);
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([expect.objectContaining({ path, code: 'invalid' })]);
      expect((await validate(overrides.couponCode)).body.data).toMatchObject({ valid: false });
    }
  });

  test('a booking pays the discounted price; racing bookings for the last use: one wins', async () => {
    const offer = await givenOffer(app, { capacity: 50 });
    await givenCoupon(offer);
    const book = () =>
      as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, { couponCode: 'LAUNCH20', totalAmount: 400 }));
    const results = await Promise.all(Array.from({ length: 20 }, book));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 422 && r.body.errors[0].code === 'coupon_invalid')).toHaveLength(19);
    expect(results.find((r) => r.status === 200)!.body.data.totalAmount).toBe(400);
    expect((await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer))).status).toBe(200);
  });
});

describe('ratings from review.created', () => {
  test('keep averageRating and totalReviews, once per review', async () => {
    const offer = await givenOffer(app);
    const handler = reviewsConsumer(app().parts.ratings).handlers['review.created']!;
    const review = (rating: number) =>
      makeEvent(
        'review.created',
        { reviewId: `rev_${Math.random()}`, entityType: 'consultation_service', entityId: offer.consultationId, rating },
        { source: 'review' },
      );
    const five = review(5);
    await handler(five, { log });
    await handler(five, { log });
    await handler(review(4), { log });
    const detail = await as(app, admin)('GET', `/consultations/${offer.consultationId}`);
    expect(detail.body.data).toMatchObject({ averageRating: 4.5, totalReviews: 2 });
  });
});
