import { MAX_SLOTS_PER_QUERY } from '../src/domain/consultations';
import {
  as,
  couponChecksOf,
  daysAhead,
  givenOffer,
  newUser,
  useConsultationApp,
  weekdays,
  ZONE,
  type Offer,
  models,
  approveAsRead,
} from './harness';

const app = useConsultationApp();

/** A consultation of 5-minute slots all day long: the most slots a range can hold. */
async function givenBusyOffer(): Promise<Offer> {
  const seller = newUser('seller');
  const sellerCall = as(app, seller);
  const ruleSet = await sellerCall('POST', '/consultations/availability-rule-sets/rule-sets', {
    name: 'Always',
    timezone: ZONE,
    availabilityRules: weekdays.map((weekday) => ({
      type: 'weekly',
      weekday,
      intervals: [{ start_time: '00:00:00', end_time: '23:55:00', enabled: true }],
    })),
  });
  const pricing = await sellerCall('POST', '/consultations/pricing', { basePrice: 10, currency: 'ETB' });
  const created = await sellerCall('POST', '/consultations', {
    title: 'Quick calls',
    duration: 5,
    sessionType: 'OneToOne',
    deliveryMode: 'Phone',
    timezone: ZONE,
    language: 'English',
    category: 'Support',
    ruleSetId: ruleSet.body.data.id,
    pricingId: pricing.body.data.id,
  });
  await approveAsRead(app, created.body.data.id);
  return {
    seller,
    consultationId: created.body.data.id,
    referenceId: created.body.data.referenceId,
    ruleSetId: ruleSet.body.data.id,
    pricingId: pricing.body.data.id,
  };
}

describe('GET /consultations/{id}/slots is bounded', () => {
  test('a range of more than 31 days, or one that ends before it starts, is 422 naming `to`; a malformed date is 400', async () => {
    const offer = await givenOffer(app);
    const slots = (from: string, to: string) =>
      as(app, undefined)('GET', `/consultations/${offer.consultationId}/slots?from=${from}&to=${to}`);
    for (const [from, to] of [
      [daysAhead(1), daysAhead(32)],
      [daysAhead(1), daysAhead(62)],
      [daysAhead(5), daysAhead(4)],
    ]) {
      const res = await slots(from!, to!);
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ success: false, errors: [{ path: 'to', code: 'invalid' }] });
    }
    const malformed = await slots(daysAhead(1), '2030-02-30');
    expect(malformed.status).toBe(400);
    // Only what is wrong: no range is measured to a day that does not exist.
    expect(malformed.body.errors).toEqual([{ path: 'to', code: 'invalid', message: 'Not a date' }]);
    const month = await slots(daysAhead(1), daysAhead(31));
    expect(month.status).toBe(200);
    expect(month.body.data).toMatchObject({ truncated: false });
    expect(month.body.data.slots).toHaveLength(31 * 8);
  });

  test('the answer holds at most the earliest 500 slots and says it was cut', async () => {
    const offer = await givenBusyOffer();
    const res = await as(app, undefined)('GET', `/consultations/${offer.consultationId}/slots?from=${daysAhead(1)}&to=${daysAhead(31)}`);
    expect(res.status).toBe(200);
    expect(res.body.data.truncated).toBe(true);
    expect(res.body.data.slots).toHaveLength(MAX_SLOTS_PER_QUERY);
    const starts = res.body.data.slots.map((s: { startsAt: string }) => s.startsAt);
    expect([...starts].sort()).toEqual(starts);
    expect(res.body.data.slots[0]).toMatchObject({ date: daysAhead(1), startTime: '00:00' });
  });
});

describe('an approved consultation edited on what a booking gets goes back to review', () => {
  test.each([
    ['duration', () => ({ duration: 45 })],
    ['maxCapacity', () => ({ maxCapacity: 3 })],
  ])('%s: Pending and Hidden, off the public list and unbookable until approved again', async (_field, edit) => {
    const offer = await givenOffer(app, { capacity: 2 });
    const seller = as(app, offer.seller);
    const edited = await seller('PUT', `/consultations/${offer.consultationId}`, edit());
    expect(edited.status).toBe(200);
    expect(edited.body.data).toMatchObject({ currentStatus: 'Pending', visibility: 'Hidden' });
    expect((await as(app, undefined)('GET', `/consultations/${offer.consultationId}`)).status).toBe(404);
    expect((await approveAsRead(app, offer.consultationId)).body.data).toMatchObject({
      currentStatus: 'Approved',
      visibility: 'Published',
    });
    expect((await as(app, undefined)('GET', `/consultations/${offer.consultationId}`)).body.data).toMatchObject(edit());
  });

  test('a new rule set or pricing of the seller’s own sends it back too; another seller’s is 403, nothing changed', async () => {
    const offer = await givenOffer(app);
    const other = await givenOffer(app);
    const seller = as(app, offer.seller);
    for (const body of [{ pricingId: other.pricingId }, { ruleSetId: other.ruleSetId }]) {
      const res = await seller('PUT', `/consultations/${offer.consultationId}`, body);
      expect(res.status).toBe(403);
      expect(res.body.errors[0]).toMatchObject({ code: 'forbidden', path: Object.keys(body)[0] });
    }
    expect((await models().Consultation.findById(offer.consultationId).lean())!).toMatchObject({
      currentStatus: 'Approved',
      pricingId: offer.pricingId,
    });
    const pricing = await seller('POST', '/consultations/pricing', { basePrice: 900, currency: 'ETB' });
    const repriced = await seller('PUT', `/consultations/${offer.consultationId}`, { pricingId: pricing.body.data.referenceId });
    expect(repriced.body.data).toMatchObject({ currentStatus: 'Pending', visibility: 'Hidden' });
    expect((await models().Consultation.findById(offer.consultationId).lean())!.pricingId).toBe(pricing.body.data.id);
  });

  test('edits of the description, title, category or tags (or the same duration) keep it Approved, the text waiting for review', async () => {
    const offer = await givenOffer(app);
    const res = await as(app, offer.seller)('PUT', `/consultations/${offer.consultationId}`, {
      title: 'Career coaching, refreshed',
      tags: ['cv'],
      duration: 60,
    });
    // The new text is a pending revision (moderation.test.ts); the approved one stays live.
    expect(res.body.data).toMatchObject({
      title: 'Career coaching',
      currentStatus: 'Approved',
      visibility: 'Published',
      pendingRevision: { changes: { title: 'Career coaching, refreshed', tags: ['cv'] } },
    });
  });

  test('a OneToOne consultation keeps maxCapacity 1 (422), and stays Approved', async () => {
    const offer = await givenOffer(app);
    const res = await as(app, offer.seller)('PUT', `/consultations/${offer.consultationId}`, { maxCapacity: 2 });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: 'maxCapacity', code: 'invalid' })]);
    expect((await models().Consultation.findById(offer.consultationId).lean())!).toMatchObject({
      maxCapacity: 1,
      currentStatus: 'Approved',
      visibility: 'Published',
    });
  });
});

describe('coupon validation', () => {
  const validate = (user: ReturnType<typeof newUser>, couponCode: string, consultationId: string) =>
    as(app, user)('POST', '/consultations/pricing/promotional-discounts/validate-coupon', { couponCode, consultationId });
  const coupon = (offer: Offer, couponCode: string, overrides: object = {}) =>
    as(app, offer.seller)('POST', '/consultations/pricing/promotional-discounts', {
      name: couponCode,
      discountType: 'Fixed',
      discountValue: 50,
      validFrom: new Date(Date.now() - 86_400_000).toISOString(),
      validTo: new Date(Date.now() + 86_400_000).toISOString(),
      couponCode,
      maxUses: 5,
      ...overrides,
    });

  test('an inactive, expired or future coupon answers exactly as an unknown code', async () => {
    const offer = await givenOffer(app);
    await coupon(offer, 'SLEEPY', { isActive: false });
    await coupon(offer, 'STALE', { validFrom: '2020-01-01T00:00:00Z', validTo: '2020-02-01T00:00:00Z' });
    await coupon(offer, 'LATER', { validFrom: '2099-01-01T00:00:00Z', validTo: '2099-02-01T00:00:00Z' });
    const buyer = newUser();
    const unknown = (await validate(buyer, 'NOSUCHCODE', offer.consultationId)).body.data;
    expect(unknown).toEqual({
      valid: false,
      reason: 'This coupon code cannot be used',
      discountType: null,
      discountValue: null,
      finalPrice: 500,
      originalPrice: 500,
      savings: 0,
      currency: 'ETB',
      usedByUser: false,
    });
    for (const code of ['SLEEPY', 'STALE', 'LATER']) expect((await validate(buyer, code, offer.consultationId)).body.data).toEqual(unknown);
  });

  test('fixed discounts of 1.10 and 19.99 are exact amounts; sub-cent and exponent values are 422 naming discountValue', async () => {
    const offer = await givenOffer(app);
    for (const [code, value, savings] of [
      ['DIME', 1.1, 1.1],
      ['ALMOST', 19.99, 19.99],
    ] as const) {
      const created = await coupon(offer, code, { discountValue: value });
      expect(created.status).toBe(200);
      expect((await validate(newUser(), code, offer.consultationId)).body.data).toMatchObject({
        valid: true,
        discountValue: value,
        savings,
        finalPrice: Number((500 - savings).toFixed(2)),
      });
    }
    // The published schema of discountValue is a positive number (no multipleOf: a Percentage
    // may have any decimals), so these match it; "a Fixed discount has at most 2 decimals" is a
    // rule between discountType and discountValue: 422. Nothing is created.
    for (const [code, value] of [
      ['TINY', 2.6e-42],
      ['THIRD', 0.001],
    ] as const) {
      const res = await coupon(offer, code, { discountValue: value });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([expect.objectContaining({ path: 'discountValue', code: 'invalid' })]);
      expect((await validate(newUser(), code, offer.consultationId)).body.data).toMatchObject({ valid: false });
    }
    // Not a number at all: against the schema, 400.
    const text = await coupon(offer, 'WORDS', { discountValue: '1.10' });
    expect(text.status).toBe(400);
    expect(text.body.errors).toEqual([expect.objectContaining({ path: 'discountValue', code: 'invalid' })]);
  });

  test('a hidden consultation is unknown to others: 404, no price', async () => {
    const hidden = await givenOffer(app, { approve: false });
    const res = await validate(newUser(), 'ANY', hidden.consultationId);
    expect(res.status).toBe(404);
    expect(JSON.stringify(res.body)).not.toContain('500');
    expect((await validate(hidden.seller, 'ANY', hidden.consultationId)).body.data).toMatchObject({ originalPrice: 500 });
  });

  test('20 checks per user and minute, taken atomically; the 21st is refused, not counted, until the next minute', async () => {
    const userId = newUser().id;
    const now = new Date('2030-05-01T10:00:45.000Z');
    const results = await Promise.allSettled(Array.from({ length: 21 }, () => app().parts.couponChecks.count(userId, now)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(20);
    const refused = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!.reason;
    expect(refused).toMatchObject({ status: 429, headers: { 'Retry-After': '15' } });
    await expect(app().parts.couponChecks.count(userId, new Date('2030-05-01T10:00:59.000Z'))).rejects.toMatchObject({ status: 429 });
    expect(await couponChecksOf(userId)).toEqual([expect.objectContaining({ count: 20 })]);
    await expect(app().parts.couponChecks.count(userId, new Date('2030-05-01T10:01:00.000Z'))).resolves.toBeUndefined();
    await app().parts.couponChecks.sweep(new Date('2030-05-01T10:05:00.000Z'));
    expect(await couponChecksOf(userId)).toEqual([]);
  });

  test('over the limit the endpoint answers 429 with Retry-After; other users are unaffected', async () => {
    const offer = await givenOffer(app);
    const guesser = newUser();
    // The guesser has used up this minute and the next (the test may cross a minute's end).
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    await Promise.all(
      [minute, minute + 60_000].flatMap((start) =>
        Array.from({ length: 20 }, () => app().parts.couponChecks.count(guesser.id, new Date(start))),
      ),
    );
    const refused = await validate(guesser, 'GUESS', offer.consultationId);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ success: false, errors: [{ code: 'rate_limited' }] });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect((await validate(newUser(), 'GUESS', offer.consultationId)).status).toBe(200);
  });
});
