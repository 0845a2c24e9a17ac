import {
  apiOf,
  book,
  bookingBody,
  fund,
  offerSoonSlot,
  register,
  reviewWhenEligible,
  runSession,
  systemWithAdmin,
  type Session,
} from './fixtures';
import { eventually, type System } from './system';

// A rating bought with the seller's own cent, replayed through the gateway: the seller sends a
// puppet buyer 0.01, gives it a coupon of 499.99 on a 500 consultation, runs the session, and
// the puppet writes 5★. The review is listed but leaves the public rating as it was; a customer
// who paid the price moves it.
let system: System;
let admin: Session;
systemWithAdmin((started) => ({ system, admin } = started));

test('a seller’s cent and a 499.99 coupon buy no 5★: the public rating is unchanged; a paying customer’s review counts', async () => {
  const seller = await register(system, 'seller');
  const [puppet, customer] = await Promise.all([register(system, 'buyer'), register(system, 'buyer')]);
  await fund(system, [seller], 10);
  await fund(system, [customer], 500);
  // The cent, from the seller's wallet to the puppet's (opened from its registration event).
  const sent = await eventually(
    () => apiOf(system, seller)('POST', '/v1/wallet/transfers', { toUserId: puppet.id, amount: 1, currency: 'ETB' }),
    (res) => res.status === 200,
    15_000,
  );
  expect(sent.value.status).toBe(200);

  const { offer, slot, startsAt } = await offerSoonSlot(system, seller, admin, { priceMajor: 500, capacity: 3, leadSeconds: 25 });
  const coupon = await apiOf(system, seller)('POST', '/consultations/pricing/promotional-discounts', {
    name: 'Almost free',
    discountType: 'Fixed',
    discountValue: 499.99,
    couponCode: 'CENT49999',
    maxUses: 5,
    validFrom: new Date(Date.now() - 86_400_000).toISOString(),
    validTo: new Date(Date.now() + 86_400_000).toISOString(),
  });
  expect(coupon.status).toBe(200);
  const farmed = await apiOf(system, puppet)('POST', '/consultations/bookings', {
    ...bookingBody(offer, slot, puppet.email),
    totalAmount: 0.01,
    couponCode: 'CENT49999',
  });
  expect(farmed.body.data).toMatchObject({ status: 'Confirmed', totalAmount: 0.01 });
  const paid = await book(system, customer, offer, slot);
  expect(paid.body.data).toMatchObject({ status: 'Confirmed', totalAmount: 500 });

  await runSession(system, seller, paid.body.data.sessionId as string, startsAt);

  const review = (buyer: Session, rating: number) => reviewWhenEligible(system, buyer, offer.id, rating);
  const listing = async () =>
    (await apiOf(system)('GET', `/reviews/by-entity?entityType=consultation_service&entityId=${offer.id}`)).body.data;
  const publicRating = async () => (await apiOf(system)('GET', `/consultations/${offer.id}`)).body.data;

  await review(puppet, 5);
  const farmedListing = await listing();
  expect(farmedListing).toMatchObject({ averageRating: 0, totalReviews: 0, pagination: { total: 1 } });
  expect(farmedListing.reviews[0]).toMatchObject({ rating: 5, countsInRating: false, verifiedPurchase: false });
  expect(await publicRating()).toMatchObject({ totalReviews: 0 });

  await review(customer, 4);
  expect(await listing()).toMatchObject({ averageRating: 4, totalReviews: 1, pagination: { total: 2 } });
  const { value } = await eventually(publicRating, (data) => data.totalReviews === 1, 15_000);
  expect(value).toMatchObject({ averageRating: 4, totalReviews: 1 });
  // The puppet's 5★ never reached the public rating, not even for a moment.
  expect((await publicRating()).averageRating).toBe(4);
}, 180_000);
