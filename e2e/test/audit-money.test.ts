import {
  apiOf,
  book,
  dayFromNow,
  fund,
  nearSlots,
  offerConsultation,
  offerNearConsultation,
  offerSoonSlot,
  register,
  reviewWhenEligible,
  runSession,
  slotsOf,
  systemWithAdmin,
  type Offer,
  type Session,
  type Slot,
} from './fixtures';
import { eventually, type System } from './system';

/** An outside audit's attacks on the consultation's money and trust, replayed through the gateway. */
let system: System;
let admin: Session;
systemWithAdmin((started) => ({ system, admin } = started));

const walletOf = async (user: Session) => (await apiOf(system, user)('GET', '/v1/wallet')).body.data;

/** A percentage coupon of the seller's, valid from yesterday to tomorrow. */
async function givenCoupon(seller: Session, couponCode: string, discountValue: number, maxUses: number): Promise<void> {
  const created = await apiOf(system, seller)('POST', '/consultations/pricing/promotional-discounts', {
    name: couponCode,
    discountType: 'Percentage',
    discountValue,
    couponCode,
    maxUses,
    validFrom: new Date(Date.now() - 86_400_000).toISOString(),
    validTo: new Date(Date.now() + 86_400_000).toISOString(),
  });
  expect(created.status).toBe(200);
}

/** A booking of one place at 100 ETB naming a coupon, with the total the client claims. */
const bookWithCoupon = (buyer: Session, offer: Offer, slot: Slot, couponCode: string, totalAmount: number) =>
  apiOf(system, buyer)('POST', '/consultations/bookings', {
    SellerId: offer.sellerId,
    consultationId: offer.id,
    ruleSetId: offer.ruleSetId,
    ...slot,
    participants: [{ fullName: 'A buyer', email: buyer.email, phone: '+251911223344' }],
    subTotal: 100,
    totalAmount,
    currency: 'ETB',
    couponCode,
  });

test('a booking of a slot whose session has started is refused, and the buyer’s wallet holds nothing', async () => {
  const seller = await register(system, 'seller');
  const [first, late] = await Promise.all([register(system, 'buyer'), register(system, 'buyer')]);
  await fund(system, [first, late], 500);
  const { offer, slot } = await offerSoonSlot(system, seller, admin, { capacity: 5, leadSeconds: 30 });
  const booked = await book(system, first, offer, slot);
  expect(booked.body.data.status).toBe('Confirmed');
  const started = await apiOf(system, seller)('POST', `/consultations/sessions/${booked.body.data.sessionId}/start`, {});
  expect(started.status).toBe(200);
  const refused = await book(system, late, offer, slot);
  expect(refused.status).toBe(422);
  expect(refused.body.errors[0]).toMatchObject({ code: 'slot_unavailable' });
  expect(await walletOf(late)).toMatchObject({ etbAvailableBalance: 500, heldBalance: 0 });
});

test('a session cannot be ended before its slot starts (the seller would be paid for nothing)', async () => {
  const seller = await register(system, 'seller');
  const buyer = await register(system, 'buyer');
  await fund(system, [buyer], 500);
  const offer = await offerNearConsultation(system, seller, admin);
  const booked = await book(system, buyer, offer, nearSlots(offer)[0]!);
  const sessionId = booked.body.data.sessionId as string;
  expect((await apiOf(system, seller)('POST', `/consultations/sessions/${sessionId}/start`, {})).status).toBe(200);
  const ended = await apiOf(system, seller)('POST', `/consultations/sessions/${sessionId}/end`, { sessionSummary: 'Done' });
  expect(ended.status).toBe(422);
  expect(ended.body.errors[0]).toMatchObject({ code: 'too_early' });
  const sessions = await apiOf(system, seller)('GET', '/consultations/sessions?status=In%20Progress');
  expect(sessions.body.data.sessions.map((s: { id: string }) => s.id)).toContain(sessionId);
});

test('a no-show marked in the slot’s first second is refused (422 no_show_too_early): the session and the buyer’s hold stay as they were', async () => {
  const seller = await register(system, 'seller');
  const buyer = await register(system, 'buyer');
  await fund(system, [buyer], 500);
  const { offer, slot, startsAt } = await offerSoonSlot(system, seller, admin, { priceMajor: 100, leadSeconds: 5 });
  const booked = await book(system, buyer, offer, slot);
  expect(booked.body.data.status).toBe('Confirmed');
  const { sessionId, bookingId } = booked.body.data as { sessionId: string; bookingId: string };
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, startsAt.getTime() - Date.now() + 300)));
  const marked = await apiOf(system, seller)('POST', `/consultations/sessions/${sessionId}/no-show`, {});
  expect(marked.status).toBe(422);
  expect(marked.body.errors[0]).toMatchObject({ code: 'no_show_too_early' });
  const sessions = await apiOf(system, seller)('GET', '/consultations/sessions?status=Scheduled');
  expect(sessions.body.data.sessions.map((s: { id: string }) => s.id)).toContain(sessionId);
  const held = await apiOf(system, admin)('GET', `/wallets/booking-holds/${bookingId}`);
  expect(held.body.data).toMatchObject({ status: 'Held', settlement: null, disputed: false });
  expect(await walletOf(buyer)).toMatchObject({ etbAvailableBalance: 400, heldBalance: 100 });
  // Nothing to dispute: the session is not marked.
  expect((await apiOf(system, buyer)('POST', `/consultations/sessions/${sessionId}/dispute`, { reason: 'x' })).status).toBe(409);
});

test('coupon codes cannot be guessed through bookings: one answer for every bad code, no discount told, throttled', async () => {
  const seller = await register(system, 'seller');
  const guesser = await register(system, 'buyer');
  const offer = await offerConsultation(system, seller, admin, { priceMajor: 100 });
  await givenCoupon(seller, 'SECRET30', 30, 100);
  const slot = slotsOf(offer, dayFromNow(3))[0]!;
  const guess = (couponCode: string) => bookWithCoupon(guesser, offer, slot, couponCode, 100);
  const right = await guess('SECRET30');
  expect(right.status).toBe(422);
  expect(right.body.errors[0]).toMatchObject({ code: 'price_mismatch' });
  expect(JSON.stringify(right.body)).not.toContain('70');
  // At most 20 checks a minute (the limit of validate-coupon); the test may cross a minute's end.
  const answers: Array<{ status: number; message?: string }> = [];
  for (let i = 0; i < 45 && !answers.some((a) => a.status === 429); i += 1) {
    const res = await guess(`WRONG${i}`);
    answers.push({ status: res.status, message: res.body.errors?.[0]?.message });
  }
  expect(answers.at(-1)!.status).toBe(429);
  expect(answers.length).toBeLessThanOrEqual(41);
  expect(new Set(answers.filter((a) => a.status === 422).map((a) => a.message))).toEqual(new Set(['This coupon code cannot be used']));
});

test('a retried booking with the same Idempotency-Key returns the first answer and holds once', async () => {
  const seller = await register(system, 'seller');
  const buyer = await register(system, 'buyer');
  await fund(system, [buyer], 500);
  const offer = await offerConsultation(system, seller, admin, { priceMajor: 100, capacity: 5 });
  const body = {
    SellerId: seller.ref,
    consultationId: offer.id,
    ruleSetId: offer.ruleSetId,
    ...slotsOf(offer, dayFromNow(3))[0]!,
    participants: [{ fullName: 'A buyer', email: buyer.email, phone: '+251911223344' }],
    subTotal: 100,
    totalAmount: 100,
    currency: 'ETB',
  };
  const key = { 'Idempotency-Key': `retry-${Date.now()}` };
  const first = await apiOf(system, buyer)('POST', '/consultations/bookings', body, key);
  expect(first.status).toBe(200);
  const retried = await apiOf(system, buyer)('POST', '/consultations/bookings', body, key);
  expect(retried.status).toBe(200);
  expect(retried.body).toEqual(first.body);
  expect(await walletOf(buyer)).toMatchObject({ etbAvailableBalance: 400, heldBalance: 100 });
  const listed = await apiOf(system, buyer)('GET', '/consultations/bookings');
  expect(listed.body.data.bookings).toHaveLength(1);
  const reused = await apiOf(system, buyer)('POST', '/consultations/bookings', { ...body, notes: 'another' }, key);
  expect(reused.status).toBe(409);
});

test('a review farm (100 % coupon, fresh empty wallets, 5★ each) leaves the public rating as it was; a paying buyer’s review counts', async () => {
  const seller = await register(system, 'seller');
  const farm = await Promise.all([0, 1, 2].map(() => register(system, 'buyer')));
  const payer = await register(system, 'buyer');
  await fund(system, [payer], 100);
  const { offer, slot, startsAt } = await offerSoonSlot(system, seller, admin, { priceMajor: 100, capacity: 4, leadSeconds: 20 });
  await givenCoupon(seller, 'FREE100', 100, 10);
  const bookFree = (buyer: Session) => bookWithCoupon(buyer, offer, slot, 'FREE100', 0);
  for (const buyer of farm) expect((await bookFree(buyer)).body.data).toMatchObject({ status: 'Confirmed', totalAmount: 0 });
  const paid = await book(system, payer, offer, slot);
  expect(paid.body.data).toMatchObject({ status: 'Confirmed', totalAmount: 100 });
  await runSession(system, seller, paid.body.data.sessionId as string, startsAt);

  const review = (buyer: Session, rating: number) => reviewWhenEligible(system, buyer, offer.id, rating);
  for (const buyer of farm) await review(buyer, 5);
  const listed = await apiOf(system)('GET', `/reviews/by-entity?entityType=consultation_service&entityId=${offer.id}`);
  expect(listed.body.data.reviews).toHaveLength(3);
  expect(listed.body.data.reviews.every((r: { countsInRating: boolean }) => r.countsInRating === false)).toBe(true);
  expect(listed.body.data).toMatchObject({ averageRating: 0, totalReviews: 0 });
  const publicRating = async () => (await apiOf(system)('GET', `/consultations/${offer.id}`)).body.data;
  expect(await publicRating()).toMatchObject({ totalReviews: 0 });

  await review(payer, 2);
  const { value } = await eventually(publicRating, (data) => data.totalReviews === 1, 15_000);
  expect(value).toMatchObject({ averageRating: 2, totalReviews: 1 });
}, 120_000);
