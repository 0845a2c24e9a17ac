import mongoose from 'mongoose';
import pino from 'pino';
import { makeEvent, newReference } from '@mkt/contracts';
import { startComponent, stopRuntime, type StartedRuntime } from '@mkt/kit/runtime';
import type { Bus } from '@mkt/kit/bus';
import { call, listenForEvents, testEnv, testIdentity, testServers, uniqueName, waitFor, type TestUser } from '@mkt/infra';
import { reviewService } from '../src/composition';
import { loadConfig } from '../src/config';

const identity = testIdentity();
const env = testEnv('review');
const log = pino({ level: 'silent' });
let started: StartedRuntime;
let url: string;
let bus: Bus;
// The service as main.ts composes it: its models and consumers are read from the composition.
let service: ReturnType<typeof reviewService>;
let Review: typeof service.parts.models.Review;
let Eligibility: typeof service.parts.models.Eligibility;
let sessionsConsumer: typeof service.parts.consumers.sessions;
let usersConsumer: typeof service.parts.consumers.users;
let paymentsConsumer: typeof service.parts.consumers.payments;

beforeAll(async () => {
  const config = loadConfig(env.serviceEnv(identity.keys.publicKey));
  service = reviewService(config, log);
  ({ Review, Eligibility } = service.parts.models);
  ({ sessions: sessionsConsumer, users: usersConsumer, payments: paymentsConsumer } = service.parts.consumers);
  started = await startComponent(service.definition, env.dbName);
  ({ url } = started);
  bus = started.runtime.bus;
});
afterAll(async () => {
  await stopRuntime(started);
  await mongoose.disconnect();
});

const newUser = (role: TestUser['role'] = 'buyer', name = 'Sara T'): TestUser => identity.newUser(role, { name });
const as = (user: TestUser | undefined) => identity.as(() => url, user);
/** A completed session; `paidBuyerIds` left out is an older producer's event (everyone paid). */
const completed = (consultationId: string, consultationReferenceId: string, buyerIds: string[], paidBuyerIds?: string[]) =>
  makeEvent(
    'consultation.session.completed',
    {
      sessionId: uniqueName('ses'),
      consultationId,
      consultationReferenceId,
      sellerId: 'seller-1',
      buyerIds,
      ...(paidBuyerIds ? { paidBuyerIds } : {}),
      endedAt: new Date().toISOString(),
    },
    { source: 'consultation' },
  );
const handleCompleted = (event: ReturnType<typeof completed>) =>
  sessionsConsumer.handlers['consultation.session.completed']!(event, { log });

/** The wallet's capture of a booking, `sellerFundedMinor` of it received from the seller. */
const capture = (booking: { bookingId: string; buyerId: string; paidMinor: number }, sellerFundedMinor: number) =>
  makeEvent(
    'wallet.booking_payment.captured',
    {
      bookingId: booking.bookingId,
      buyerId: booking.buyerId,
      sellerId: 'seller-1',
      amountMinor: booking.paidMinor,
      feeMinor: 0,
      currency: 'ETB',
      sellerFundedMinor,
    },
    { source: 'wallet' },
  );
const handleCaptured = (event: ReturnType<typeof capture>) => paymentsConsumer.handlers['wallet.booking_payment.captured']!(event, { log });

function consultation() {
  return { id: uniqueName('con'), ref: newReference('CON') };
}
const review = (entityId: string, rating = 5, comment = 'Very helpful') => ({
  entityType: 'consultation_service',
  entityId,
  rating,
  comment,
});

describe('eligibility', () => {
  test('a completed session (even delivered twice) lets its buyers review; strangers get 422 not_eligible', async () => {
    const c = consultation();
    const buyer = newUser();
    const event = completed(c.id, c.ref, [buyer.id]);
    await handleCompleted(event);
    await handleCompleted(event);
    expect(await Eligibility.countDocuments({ buyerId: buyer.id })).toBe(1);
    const stranger = await as(newUser())('POST', '/reviews', review(c.id));
    expect(stranger.status).toBe(422);
    expect(stranger.body.errors[0].code).toBe('not_eligible');
    const before = await as(buyer)('GET', `/reviews/consultation/${c.ref}/status`);
    expect(before.body.data).toEqual({ canReview: true, hasReviewed: false, sessionCompleted: true, consultationId: c.ref });
    const res = await as(buyer)('POST', '/reviews', review(c.ref, 4, '  Fish & chips <3 <b>not bold</b>  '));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      entityType: 'consultation_service',
      entityId: c.id,
      rating: 4,
      comment: 'Fish & chips <3 <b>not bold</b>',
      isActive: true,
    });
    expect(res.body.data.referenceId).toMatch(/^REV_[A-Z0-9]{8}$/);
    const after = await as(buyer)('GET', `/reviews/consultation/${c.id}/status`);
    expect(after.body.data).toEqual({ canReview: false, hasReviewed: true, sessionCompleted: true, consultationId: c.id });
    const listed = await as(undefined)('GET', `/reviews/by-entity?entityType=consultation_service&entityId=${c.id}`);
    expect(listed.body.data.reviews.map((r: { comment: string }) => r.comment)).toEqual(['Fish & chips <3 <b>not bold</b>']);
    // Not eligible: the same form back, id for id and reference for reference.
    const nobody = await as(newUser())('GET', `/reviews/consultation/${c.id}/status`);
    expect(nobody.body.data).toEqual({ canReview: false, hasReviewed: false, sessionCompleted: false, consultationId: c.id });
    const nobodyByRef = await as(newUser())('GET', `/reviews/consultation/${c.ref}/status`);
    expect(nobodyByRef.body.data).toEqual({ canReview: false, hasReviewed: false, sessionCompleted: false, consultationId: c.ref });
    const byRefAfter = await as(buyer)('GET', `/reviews/consultation/${c.ref}/status`);
    expect(byRefAfter.body.data).toEqual({ canReview: false, hasReviewed: true, sessionCompleted: true, consultationId: c.ref });
  });

  test('through the broker: a published completion makes its buyers eligible', async () => {
    await bus.consume(sessionsConsumer);
    const c = consultation();
    const buyer = newUser();
    await bus.publish(completed(c.id, c.ref, [buyer.id]));
    const status = await waitFor(() => as(buyer)('GET', `/reviews/consultation/${c.id}/status`), {
      what: 'the buyer to become eligible',
      until: (res) => res.body.data.canReview === true,
    });
    expect(status.body.data).toEqual({ canReview: true, hasReviewed: false, sessionCompleted: true, consultationId: c.id });
  });
});

describe('eligibility from a no-show', () => {
  test('through the broker: a buyer the seller marked absent may still review', async () => {
    await bus.consume(sessionsConsumer);
    const c = consultation();
    const buyer = newUser();
    await bus.publish(
      makeEvent(
        'consultation.session.no_show',
        {
          sessionId: uniqueName('ses'),
          consultationId: c.id,
          consultationReferenceId: c.ref,
          sellerId: 'seller-1',
          buyerIds: [buyer.id],
          paidBuyerIds: [buyer.id],
          markedAt: new Date().toISOString(),
        },
        { source: 'consultation' },
      ),
    );
    const status = await waitFor(() => as(buyer)('GET', `/reviews/consultation/${c.ref}/status`), {
      what: 'the buyer to become eligible',
      until: (res) => res.body.data.canReview === true,
    });
    expect(status.body.data).toEqual({ canReview: true, hasReviewed: false, sessionCompleted: true, consultationId: c.ref });
    const res = await as(buyer)('POST', '/reviews', review(c.id, 1, 'The seller never joined'));
    expect(res.status).toBe(200);
    const listed = await as(undefined)('GET', `/reviews/by-entity?entityType=consultation_service&entityId=${c.id}`);
    expect(listed.body.data.reviews.map((r: { comment: string }) => r.comment)).toEqual(['The seller never joined']);
  });
});

describe('reviews', () => {
  test('one per reviewer and consultation: a second is 409, two racing posts: one wins', async () => {
    const c = consultation();
    const buyer = newUser();
    await handleCompleted(completed(c.id, c.ref, [buyer.id]));
    const results = await Promise.all(Array.from({ length: 8 }, () => as(buyer)('POST', '/reviews', review(c.id))));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(7);
  });

  test.each([[{ rating: 0 }], [{ rating: 6 }], [{ rating: 4.5 }], [{ entityType: 'product' }], [{ comment: 'x'.repeat(2001) }]])(
    '%j is 400',
    async (overrides) => {
      expect((await as(newUser())('POST', '/reviews', { ...review('con_x'), ...overrides })).status).toBe(400);
    },
  );

  test('by entity: public, newest first, names, average over active ones; deactivation follows', async () => {
    const c = consultation();
    const [a, b, d] = [newUser('buyer', 'Almaz (token)'), newUser('buyer', 'Bekele'), newUser('buyer', 'Dawit')];
    await usersConsumer.handlers['identity.user.registered']!(
      makeEvent(
        'identity.user.registered',
        { userId: a.id, referenceId: a.ref, role: 'buyer', fullName: 'Almaz Ayana', email: 'a@x.co' },
        { source: 'gateway' },
      ),
      { log },
    );
    await handleCompleted(completed(c.id, c.ref, [a.id, b.id, d.id]));
    await as(a)('POST', '/reviews', review(c.id, 5));
    await as(b)('POST', '/reviews', review(c.id, 4));
    const third = await as(d)('POST', '/reviews', review(c.id, 2));
    const list = await as(undefined)('GET', `/reviews/by-entity?entityType=consultation_service&entityId=${c.ref}&limit=2`);
    expect(list.status).toBe(200);
    expect(list.body.data).toMatchObject({ averageRating: 3.67, totalReviews: 3, pagination: { page: 1, limit: 2, total: 3 } });
    expect(list.body.data.reviews.map((r: { reviewerName: string }) => r.reviewerName)).toEqual(['Dawit', 'Bekele']);
    const page2 = await as(undefined)('GET', `/reviews/by-entity?entityType=consultation_service&entityId=${c.id}&page=2&limit=2`);
    expect(page2.body.data.reviews[0].reviewerName).toBe('Almaz Ayana');

    expect((await as(a)('PATCH', `/reviews/${third.body.data.reviewId}`, { isActive: false })).status).toBe(403);
    expect((await as(d)('PATCH', `/reviews/${third.body.data.referenceId}`, { isActive: false })).body.data.isActive).toBe(false);
    expect((await as(d)('PATCH', `/reviews/${third.body.data.reviewId}`, { isActive: true })).status).toBe(403);
    const after = await as(undefined)('GET', `/reviews/by-entity?entityType=consultation_service&entityId=${c.id}`);
    expect(after.body.data).toMatchObject({ averageRating: 4.5, totalReviews: 2 });
    expect((await as(newUser('admin'))('PATCH', `/reviews/${third.body.data.reviewId}`, { isActive: true })).body.data.isActive).toBe(true);
  });

  test('review.created is published through the outbox', async () => {
    const events = await listenForEvents(testServers().amqpUrl, env.events, ['review.created']);
    const c = consultation();
    const buyer = newUser();
    await handleCompleted(completed(c.id, c.ref, [buyer.id]));
    const res = await as(buyer)('POST', '/reviews', review(c.id, 3));
    expect(res.body).toMatchObject({ success: true });
    const event = (await events.waitFor((e) => e.json.data.reviewId === res.body.data.reviewId, 'its review.created')).json;
    await events.close();
    expect(event?.data).toEqual({
      reviewId: res.body.data.reviewId,
      entityType: 'consultation_service',
      entityId: c.id,
      rating: 3,
      countsInRating: true,
    });
  });

  test('hiding and restoring publish review.visibility_changed through the outbox, numbered; a no-op PATCH publishes nothing', async () => {
    const events = await listenForEvents(testServers().amqpUrl, env.events, ['review.visibility_changed']);
    const c = consultation();
    const buyer = newUser();
    await handleCompleted(completed(c.id, c.ref, [buyer.id]));
    const posted = await as(buyer)('POST', '/reviews', review(c.ref, 2));
    const reviewId = posted.body.data.reviewId;
    expect((await as(buyer)('PATCH', `/reviews/${reviewId}`, { isActive: false })).status).toBe(200);
    expect((await as(buyer)('PATCH', `/reviews/${reviewId}`, { isActive: false })).body.data.isActive).toBe(false);
    expect((await as(newUser('admin'))('PATCH', `/reviews/${reviewId}`, { isActive: true })).body.data.isActive).toBe(true);
    // Two changes, and the no-op PATCH none: once the outbox has let go of the review's events
    // and the listener has seen everything published before its marker, that is all there is.
    await waitFor(() => events.seen.filter((e) => e.json.data.reviewId === reviewId).length >= 2, { what: 'the two changes' });
    await waitFor(async () => !(await Review.exists({ _id: reviewId, 'pendingEvents.0': { $exists: true } })), {
      what: 'the outbox to let go of the changes',
    });
    await events.settle();
    const ours = events.seen.filter((e) => e.json.data.reviewId === reviewId).map((e) => e.json);
    const base = { reviewId, entityType: 'consultation_service', entityId: c.id, rating: 2, countsInRating: true };
    expect(ours.map((e) => e.data)).toEqual([
      { ...base, isActive: false, sequence: 1 },
      { ...base, isActive: true, sequence: 2 },
    ]);
    // The no-op PATCH wrote no change (and so no event): two changes in all.
    expect((await Review.findById(reviewId).lean())!.visibilityChanges).toBe(2);
    await events.close();
  });

  test('an admin’s hide and restore each carry one audit entry with the change; the reviewer’s own hide and a no-op none', async () => {
    const entries = await listenForEvents(testServers().amqpUrl, env.events, ['review.admin_action.recorded']);
    const c = consultation();
    const buyer = newUser();
    const admin = newUser('admin');
    await handleCompleted(completed(c.id, c.ref, [buyer.id]));
    const reviewId = (await as(buyer)('POST', '/reviews', review(c.ref, 4))).body.data.reviewId;
    const hide = () =>
      call(url, 'PATCH', `/reviews/${reviewId}`, {
        token: identity.tokenOf(admin),
        body: { isActive: false },
        headers: { 'x-request-id': `hide-${reviewId}` },
      });
    expect((await hide()).status).toBe(200);
    expect((await hide()).status).toBe(200); // a repeat: unchanged, nothing recorded
    expect((await as(buyer)('PATCH', `/reviews/${reviewId}`, { isActive: true })).status).toBe(403); // refused: nothing
    expect((await as(admin)('PATCH', `/reviews/${reviewId}`, { isActive: true })).status).toBe(200);
    expect((await as(buyer)('PATCH', `/reviews/${reviewId}`, { isActive: false })).status).toBe(200); // the reviewer's own
    await waitFor(() => events(reviewId).length >= 2, { what: 'the two audit entries' });
    await waitFor(async () => !(await Review.exists({ _id: reviewId, 'pendingEvents.0': { $exists: true } })), {
      what: 'the outbox to let go of the changes',
    });
    await entries.settle();
    expect(events(reviewId).map((e) => e.data)).toEqual([
      expect.objectContaining({
        action: 'review.hide',
        actorId: admin.id,
        targetType: 'review',
        targetId: reviewId,
        requestId: `hide-${reviewId}`,
        before: { isActive: true },
        after: { isActive: false, sequence: 1 },
      }),
      expect.objectContaining({ action: 'review.restore', before: { isActive: false }, after: { isActive: true, sequence: 2 } }),
    ]);
    await entries.close();

    function events(id: string) {
      return entries.seen.filter((e) => e.json.data.targetId === id).map((e) => e.json);
    }
  });

  test('posting needs a token; reading by entity does not', async () => {
    expect((await as(undefined)('POST', '/reviews', review('con_x'))).status).toBe(401);
    expect((await as(undefined)('GET', '/reviews/consultation/con_x/status')).status).toBe(401);
  });
});

describe('reviews from free places (farmed reviews)', () => {
  const byEntity = async (key: string) =>
    (await as(undefined)('GET', `/reviews/by-entity?entityType=consultation_service&entityId=${key}`)).body.data;

  test('a farm of free bookings is listed, marked, and moves neither the average nor the count; a paying buyer does', async () => {
    const c = consultation();
    const farm = [newUser('buyer', 'Farm 1'), newUser('buyer', 'Farm 2'), newUser('buyer', 'Farm 3')];
    const payer = newUser('buyer', 'Payer');
    // Each farm account had its place for free (a 100 % coupon); the payer paid for theirs.
    for (const fake of farm) await handleCompleted(completed(c.id, c.ref, [fake.id], []));
    await handleCompleted(completed(c.id, c.ref, [payer.id], [payer.id]));
    for (const fake of farm) expect((await as(fake)('POST', '/reviews', review(c.id, 5))).status).toBe(200);
    const farmed = await byEntity(c.ref);
    expect(farmed).toMatchObject({ averageRating: 0, totalReviews: 0, pagination: { total: 3 } });
    expect(farmed.reviews.map((r: { countsInRating: boolean }) => r.countsInRating)).toEqual([false, false, false]);

    expect((await as(payer)('POST', '/reviews', review(c.ref, 2))).status).toBe(200);
    const after = await byEntity(c.id);
    expect(after).toMatchObject({ averageRating: 2, totalReviews: 1, pagination: { total: 4 } });
    expect(after.reviews[0]).toMatchObject({ reviewerName: 'Payer', rating: 2, countsInRating: true });
  });

  test('review.created says whether it counts; a buyer who later pays has their review counted, told by a numbered change', async () => {
    const events = await listenForEvents(testServers().amqpUrl, env.events, ['review.created', 'review.visibility_changed']);
    const c = consultation();
    const buyer = newUser();
    await handleCompleted(completed(c.id, c.ref, [buyer.id], []));
    const reviewId = (await as(buyer)('POST', '/reviews', review(c.id, 4))).body.data.reviewId;
    const created = await events.waitFor((e) => e.json.type === 'review.created' && e.json.data.reviewId === reviewId, 'review.created');
    expect(created.json.data).toMatchObject({ rating: 4, countsInRating: false });

    // Another free session changes nothing; the paid one (delivered twice) counts the review once.
    await handleCompleted(completed(c.id, c.ref, [buyer.id], []));
    expect(await byEntity(c.id)).toMatchObject({ averageRating: 0, totalReviews: 0 });
    const paid = completed(c.id, c.ref, [buyer.id, newUser().id], [buyer.id]);
    await handleCompleted(paid);
    await handleCompleted(paid);
    expect(await byEntity(c.id)).toMatchObject({ averageRating: 4, totalReviews: 1, reviews: [{ countsInRating: true }] });
    // A free place after the paid one takes nothing back.
    await handleCompleted(completed(c.id, c.ref, [buyer.id], []));
    expect(await byEntity(c.id)).toMatchObject({ averageRating: 4, totalReviews: 1 });
    expect((await Eligibility.findOne({ consultationId: c.id, buyerId: buyer.id }).lean())!.paid).toBe(true);

    const changed = await events.waitFor(
      (e) => e.json.type === 'review.visibility_changed' && e.json.data.reviewId === reviewId,
      'the change that counts it',
    );
    expect(changed.json.data).toEqual({
      reviewId,
      entityType: 'consultation_service',
      entityId: c.id,
      rating: 4,
      isActive: true,
      sequence: 1,
      countsInRating: true,
    });
    expect((await Review.findById(reviewId).lean())!.visibilityChanges).toBe(1);
    await events.close();
  });

  test('a seller’s cent and a 499.99 coupon buy no rating; a customer who paid counts, verified once captured; seller-sent money stops a review counting', async () => {
    const events = await listenForEvents(testServers().amqpUrl, env.events, ['review.visibility_changed']);
    const c = consultation();
    const [puppet, customer, funded] = [newUser('buyer', 'Puppet'), newUser('buyer', 'Customer'), newUser('buyer', 'Funded')];
    const booking = (buyer: TestUser, paidMinor: number) => ({
      bookingId: uniqueName('bk'),
      buyerId: buyer.id,
      paidMinor,
      listMinor: 500_00,
    });
    const [cent, full, sent] = [booking(puppet, 1), booking(customer, 500_00), booking(funded, 500_00)];
    // The puppet's place cost a cent (a 499.99 coupon on 500): it is paid, so in paidBuyerIds.
    const session = completed(c.id, c.ref, [puppet.id, customer.id, funded.id], [puppet.id, customer.id, funded.id]);
    await handleCompleted({ ...session, data: { ...session.data, payments: [cent, full, sent] } });
    expect((await as(puppet)('POST', '/reviews', review(c.id, 5))).status).toBe(200);
    expect(await byEntity(c.id)).toMatchObject({ averageRating: 0, totalReviews: 0, reviews: [{ countsInRating: false }] });
    // The wallet's capture says the cent came from the seller: still nothing.
    await handleCaptured(capture(cent, 1));
    expect(await byEntity(c.id)).toMatchObject({
      averageRating: 0,
      totalReviews: 0,
      reviews: [{ countsInRating: false, verifiedPurchase: false }],
    });

    expect((await as(customer)('POST', '/reviews', review(c.id, 4))).status).toBe(200);
    const counted = await byEntity(c.id);
    expect(counted).toMatchObject({ averageRating: 4, totalReviews: 1 });
    expect(counted.reviews[0]).toMatchObject({ reviewerName: 'Customer', countsInRating: true, verifiedPurchase: false });
    await handleCaptured(capture(full, 0));
    expect((await byEntity(c.id)).reviews[0]).toMatchObject({ reviewerName: 'Customer', countsInRating: true, verifiedPurchase: true });

    // Full price, but the seller had sent all of it: counted until the capture says so, then not.
    const fundedReview = (await as(funded)('POST', '/reviews', review(c.id, 5))).body.data;
    expect(await byEntity(c.id)).toMatchObject({ averageRating: 4.5, totalReviews: 2 });
    await handleCaptured(capture(sent, 500_00));
    await handleCaptured(capture(sent, 500_00));
    expect(await byEntity(c.id)).toMatchObject({ averageRating: 4, totalReviews: 1, pagination: { total: 3 } });
    const changed = await events.waitFor(
      (e) => e.json.type === 'review.visibility_changed' && e.json.data.reviewId === fundedReview.reviewId,
      'the change that stops it counting',
    );
    expect(changed.json.data).toMatchObject({ isActive: true, sequence: 1, countsInRating: false });
    await events.close();
  });

  test('a capture that arrives before its session is kept: the session then decides with it', async () => {
    const c = consultation();
    const funded = newUser();
    const sent = { bookingId: uniqueName('bk'), buyerId: funded.id, paidMinor: 500_00, listMinor: 500_00 };
    await handleCaptured(capture(sent, 500_00));
    const session = completed(c.id, c.ref, [funded.id], [funded.id]);
    await handleCompleted({ ...session, data: { ...session.data, payments: [sent] } });
    expect((await as(funded)('POST', '/reviews', review(c.id, 5))).status).toBe(200);
    expect(await byEntity(c.id)).toMatchObject({ averageRating: 0, totalReviews: 0, reviews: [{ countsInRating: false }] });
  });

  test('an older producer’s event without paidBuyerIds: every buyer counts', async () => {
    const c = consultation();
    const buyer = newUser();
    await handleCompleted(completed(c.id, c.ref, [buyer.id]));
    await as(buyer)('POST', '/reviews', review(c.id, 3));
    expect(await byEntity(c.id)).toMatchObject({ averageRating: 3, totalReviews: 1, reviews: [{ countsInRating: true }] });
  });
});

describe('a method a path does not serve', () => {
  test('is 405 with Allow in the envelope (for a caller with a token: the rest of /reviews is behind it)', async () => {
    expect((await as(undefined)('DELETE', '/reviews/by-entity')).status).toBe(401);
    const res = await as(newUser())('DELETE', '/reviews/by-entity?entityType=consultation_service&entityId=con_x');
    expect(res.status).toBe(405);
    // Not PATCH: the literal `/by-entity` is never read as a review id for `PATCH /reviews/{id}`.
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(res.body).toMatchObject({ success: false, errors: [{ code: 'method_not_allowed' }] });
  });
});
