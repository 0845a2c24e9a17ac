import { CouponQuoteResponse } from '@mkt/contracts';
import { admin, as, bookingBody, couponChecksOf, givenOffer, newUser, useConsultationApp, type Offer } from './harness';

const app = useConsultationApp();

// `userId` of validate-coupon and visibility status names the user the answer is for: the
// caller themselves (by id or USR reference), or anyone when an admin asks. Naming someone else
// is 403 whether or not they exist; a value that is neither a user id nor a USR reference is 400.

const VALIDATE = '/consultations/pricing/promotional-discounts/validate-coupon';
const STATUS = '/consultations/visibility/status';

async function givenCoupon(offer: Offer, couponCode: string) {
  const res = await as(app, offer.seller)('POST', '/consultations/pricing/promotional-discounts', {
    name: 'Launch',
    discountType: 'Percentage',
    discountValue: 20,
    validFrom: new Date(Date.now() - 60_000).toISOString(),
    validTo: new Date(Date.now() + 86_400_000).toISOString(),
    couponCode,
    maxUses: 10,
    // More than the one use each user here takes: the quote stays valid, `usedByUser` informs.
    maxUsesPerBuyer: 2,
  });
  expect(res.status).toBe(200);
}

/** An offer with a 20% coupon that `user` has used on a booking. */
async function givenUsedCoupon(user: ReturnType<typeof newUser>) {
  const offer = await givenOffer(app, { capacity: 10 });
  await givenCoupon(offer, 'USED20');
  const booked = await as(app, user)('POST', '/consultations/bookings', bookingBody(offer, { couponCode: 'USED20', totalAmount: 400 }));
  expect(booked.status).toBe(200);
  return offer;
}

describe('validate-coupon userId', () => {
  test('names the caller: the quote says whether they already used the coupon (by id, by reference, or by default)', async () => {
    const buyer = newUser();
    const offer = await givenUsedCoupon(buyer);
    const ask = (userId?: string) =>
      as(app, buyer)('POST', VALIDATE, { couponCode: 'used20', consultationId: offer.referenceId, ...(userId ? { userId } : {}) });
    for (const userId of [buyer.id, buyer.id.toUpperCase(), buyer.ref, undefined]) {
      const res = await ask(userId);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ valid: true, finalPrice: 400, usedByUser: true });
      expect(CouponQuoteResponse.safeParse(res.body.data).success).toBe(true);
    }
    const fresh = newUser();
    const unused = await as(app, fresh)('POST', VALIDATE, {
      couponCode: 'USED20',
      consultationId: offer.consultationId,
      userId: fresh.ref,
    });
    expect(unused.body.data).toMatchObject({ valid: true, usedByUser: false });
  });

  test('the attack: another user’s id or reference is 403 — the same answer as a made-up one — and nothing is counted', async () => {
    const victim = newUser();
    const offer = await givenUsedCoupon(victim);
    const attacker = newUser();
    const ask = (userId: string) =>
      as(app, attacker)('POST', VALIDATE, { couponCode: 'USED20', consultationId: offer.consultationId, userId });
    const answers = await Promise.all([
      ask(victim.id),
      ask(victim.ref),
      ask('3f1c2a7e-8d4b-4c1e-9a2f-5b6c7d8e9f01'),
      ask('MKT-USR-NOBODY00'),
    ]);
    for (const res of answers) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        success: false,
        message: 'userId names another user: you may ask only for yourself',
        errors: [{ path: '', code: 'forbidden', message: 'userId names another user: you may ask only for yourself' }],
      });
    }
    expect(await couponChecksOf(attacker.id)).toEqual([]);
  });

  test('an admin may name anyone, by id or reference', async () => {
    const buyer = newUser();
    const offer = await givenUsedCoupon(buyer);
    for (const [userId, used] of [
      [buyer.id, true],
      [buyer.ref, true],
      [newUser().id, false],
    ] as const) {
      const res = await as(app, admin)('POST', VALIDATE, { couponCode: 'USED20', consultationId: offer.consultationId, userId });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ valid: true, usedByUser: used });
    }
  });

  test('a value that is neither a user id nor a USR reference is 400 naming userId', async () => {
    const offer = await givenOffer(app);
    const buyer = newUser();
    for (const userId of ['u1', 'MKT-CON-7Q2M9XKD', '', 'not-a-uuid-at-all', { $ne: null }]) {
      const res = await as(app, buyer)('POST', VALIDATE, { couponCode: 'X', consultationId: offer.consultationId, userId });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ path: 'userId', code: 'invalid' })]);
    }
  });
});

describe('visibility status userId', () => {
  /** An approved consultation whose seller hides it from buyers. */
  async function givenHiddenFromBuyers() {
    const offer = await givenOffer(app);
    const created = await as(app, offer.seller)('POST', '/consultations/visibility/rule-sets', {
      name: 'No buyers',
      isDefault: true,
      validFrom: new Date(Date.now() - 60_000).toISOString(),
      validTo: new Date(Date.now() + 86_400_000).toISOString(),
      visibilityRules: [{ type: 'user_type', condition: 'buyer', action: 'hide', priority: 1 }],
    });
    expect(created.status).toBe(200);
    return offer;
  }

  test('naming the caller: user_type rules match their role from the token, not what the body claims', async () => {
    const offer = await givenHiddenFromBuyers();
    const buyer = newUser();
    const ask = (body: object) => as(app, buyer)('POST', STATUS, { consultationIds: [offer.consultationId], ...body });
    for (const body of [{ userId: buyer.id }, { userId: buyer.ref, context: { userType: 'Buyer' } }]) {
      const res = await ask(body);
      expect(res.status).toBe(200);
      expect(res.body.data.consultations[0]).toMatchObject({ visible: false, reason: expect.stringContaining('user_type buyer') });
    }
    const lie = await ask({ userId: buyer.id, context: { userType: 'seller' } });
    expect(lie.status).toBe(422);
    expect(lie.body.errors).toEqual([expect.objectContaining({ path: 'context.userType', code: 'invalid' })]);
    // Without userId the context is a preview of how such a user would see it.
    const preview = await ask({ context: { userType: 'seller' } });
    expect(preview.body.data.consultations[0]).toMatchObject({ visible: true });
  });

  test('the attack: another user’s id or reference is 403, the same as a made-up one', async () => {
    const offer = await givenHiddenFromBuyers();
    const victim = newUser();
    const attacker = newUser('seller');
    const ask = (userId: string) => as(app, attacker)('POST', STATUS, { consultationIds: [offer.consultationId], userId });
    const answers = await Promise.all([ask(victim.id), ask(victim.ref), ask('3f1c2a7e-8d4b-4c1e-9a2f-5b6c7d8e9f01')]);
    for (const res of answers) {
      expect(res.status).toBe(403);
      expect(res.body.errors).toEqual([expect.objectContaining({ code: 'forbidden' })]);
      expect(JSON.stringify(res.body)).not.toContain(victim.id);
    }
    expect(answers.map((res) => res.body)).toEqual([answers[0]!.body, answers[0]!.body, answers[0]!.body]);
  });

  test('an admin may name anyone; their role is what the admin states', async () => {
    const offer = await givenHiddenFromBuyers();
    const buyer = newUser();
    const ask = (context: object) =>
      as(app, admin)('POST', STATUS, { consultationIds: [offer.consultationId], userId: buyer.ref, context });
    expect((await ask({ userType: 'buyer' })).body.data.consultations[0]).toMatchObject({ visible: false });
    expect((await ask({})).body.data.consultations[0]).toMatchObject({ visible: true });
  });

  test('a value that is neither a user id nor a USR reference is 400 naming userId', async () => {
    const res = await as(app, newUser())('POST', STATUS, { consultationIds: ['con_x'], userId: 'u1' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: 'userId', code: 'invalid' })]);
  });
});
