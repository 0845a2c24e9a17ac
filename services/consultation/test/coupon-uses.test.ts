import { as, bookingBody, daysAhead, givenOffer, models, newUser, useConsultationApp, type Offer } from './harness';

// Coupon uses: a cancelled booking gives its use back (once), and one buyer holds at most
// `maxUsesPerBuyer` uses at a time — so neither a rival's book-and-cancel loop nor one account's
// bookings can use a promotion up for everyone else.

const app = useConsultationApp();
const USED_UP_BY_BUYER = 'You already hold as many uses of this coupon as one buyer may';

function givenCoupon(offer: Offer, overrides: object = {}) {
  return as(app, offer.seller)('POST', '/consultations/pricing/promotional-discounts', {
    name: 'Launch',
    discountType: 'Percentage',
    discountValue: 10,
    validFrom: new Date(Date.now() - 86_400_000).toISOString(),
    validTo: new Date(Date.now() + 86_400_000).toISOString(),
    couponCode: 'LAUNCH10',
    maxUses: 1,
    ...overrides,
  });
}

/** A booking with the coupon, `days` ahead at 10:00 (the offer's price 500, 10 % off). */
const book = (offer: Offer, buyer: ReturnType<typeof newUser>, days = 7, startTime = '10:00', endTime = '11:00') =>
  as(app, buyer)(
    'POST',
    '/consultations/bookings',
    bookingBody(offer, { couponCode: 'LAUNCH10', totalAmount: 450, date: daysAhead(days), startTime, endTime }),
  );
const cancel = (buyer: ReturnType<typeof newUser>, bookingId: string) =>
  as(app, buyer)('POST', '/consultations/bookings/cancel', { bookingId });
const validate = (offer: Offer, buyer: ReturnType<typeof newUser>) =>
  as(app, buyer)('POST', '/consultations/pricing/promotional-discounts/validate-coupon', {
    couponCode: 'LAUNCH10',
    consultationId: offer.consultationId,
  });
const couponOf = async (offer: Offer) => (await models().Discount.findOne({ sellerId: offer.seller.id }).lean())!;

describe('a cancelled booking gives its coupon use back', () => {
  test('a rival books and cancels the last use; a real buyer then books with the coupon', async () => {
    const offer = await givenOffer(app, { capacity: 10 });
    const created = await givenCoupon(offer);
    const rival = newUser();

    // Book and cancel (a full refund), three times: every time the use comes back.
    for (let round = 0; round < 3; round += 1) {
      const booked = await book(offer, rival);
      expect(booked.body.data).toMatchObject({ status: 'Confirmed', totalAmount: 450 });
      expect((await couponOf(offer)).uses).toBe(1);
      const cancelled = await cancel(rival, booked.body.data.bookingId);
      expect(cancelled.body.data).toMatchObject({ status: 'Cancelled', refundAmount: 450 });
      expect((await couponOf(offer)).uses).toBe(0);
    }

    const buyer = newUser();
    expect((await validate(offer, buyer)).body.data).toMatchObject({ valid: true, finalPrice: 450, usedByUser: false });
    const real = await book(offer, buyer);
    expect(real.status).toBe(200);
    expect(real.body.data).toMatchObject({ status: 'Confirmed', totalAmount: 450 });
    expect((await couponOf(offer)).uses).toBe(1);
    // The seller's coupon says its per-buyer limit (the default).
    expect(created.body.data).toMatchObject({ maxUses: 1, maxUsesPerBuyer: 1 });
  });

  test('given back exactly once: a repeated cancel and the sweep re-running the release change nothing', async () => {
    const offer = await givenOffer(app, { capacity: 10 });
    await givenCoupon(offer, { maxUses: 2, maxUsesPerBuyer: 2 });
    const buyer = newUser();
    const [kept, dropped] = [await book(offer, buyer, 7), await book(offer, buyer, 8)];
    expect([kept.body.data.status, dropped.body.data.status]).toEqual(['Confirmed', 'Confirmed']);
    expect((await couponOf(offer)).uses).toBe(2);

    expect((await cancel(buyer, dropped.body.data.bookingId)).status).toBe(200);
    expect((await cancel(buyer, dropped.body.data.bookingId)).status).toBe(409);
    // As after a crash between the cancel and its release: the sweep releases it again.
    await models().Booking.updateOne({ _id: dropped.body.data.bookingId }, { $set: { compensated: [], owed: true } });
    await app().parts.bookings.sweep();
    await app().parts.bookings.sweep();

    const coupon = await couponOf(offer);
    expect(coupon.uses).toBe(1);
    expect(coupon.usedBy).toEqual([kept.body.data.bookingId]);
    expect(Object.values(coupon.buyerUses ?? {})).toEqual([[kept.body.data.bookingId]]);
  });
});

describe('maxUsesPerBuyer', () => {
  test('two concurrent bookings by one buyer with a limit of 1 (the default): one wins', async () => {
    const offer = await givenOffer(app, { capacity: 10 });
    await givenCoupon(offer, { maxUses: 10 });
    const buyer = newUser();

    const raced = await Promise.all([book(offer, buyer, 7), book(offer, buyer, 8), book(offer, buyer, 9)]);

    expect(raced.filter((res) => res.status === 200)).toHaveLength(1);
    const refused = raced.filter((res) => res.status !== 200);
    expect(refused.map((res) => [res.status, res.body.errors[0].code])).toEqual([
      [422, 'coupon_invalid'],
      [422, 'coupon_invalid'],
    ]);
    expect((await couponOf(offer)).uses).toBe(1);
    // The buyer is told why (they know the coupon); another buyer still gets it.
    expect((await book(offer, buyer, 10)).body.message).toBe(USED_UP_BY_BUYER);
    expect((await validate(offer, buyer)).body.data).toMatchObject({
      valid: false,
      reason: USED_UP_BY_BUYER,
      usedByUser: true,
      savings: 0,
    });
    expect((await book(offer, newUser(), 10)).body.data).toMatchObject({ status: 'Confirmed', totalAmount: 450 });

    // Their cancel gives the use back: they may use it again.
    const held = raced.find((res) => res.status === 200)!.body.data.bookingId;
    expect((await cancel(buyer, held)).status).toBe(200);
    expect((await validate(offer, buyer)).body.data).toMatchObject({ valid: true, usedByUser: false });
    expect((await book(offer, buyer, 11)).body.data).toMatchObject({ status: 'Confirmed' });
  });

  test('a limit of 2: of four racing bookings by one buyer, two win', async () => {
    const offer = await givenOffer(app, { capacity: 10 });
    await givenCoupon(offer, { maxUses: 10, maxUsesPerBuyer: 2 });
    const buyer = newUser();

    const raced = await Promise.all([7, 8, 9, 10].map((days) => book(offer, buyer, days)));

    expect(raced.filter((res) => res.status === 200)).toHaveLength(2);
    expect((await couponOf(offer)).uses).toBe(2);
  });

  test('maxUsesPerBuyer is a positive whole number', async () => {
    const offer = await givenOffer(app);
    for (const maxUsesPerBuyer of [0, 1.5, 'one']) {
      const res = await givenCoupon(offer, { maxUsesPerBuyer });
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ path: 'maxUsesPerBuyer' });
    }
  });
});
