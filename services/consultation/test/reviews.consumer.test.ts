import mongoose from 'mongoose';
import { makeEvent, type IntegrationEvent } from '@mkt/contracts';
import { readQueue, testServers, uniqueName } from '@mkt/infra';
import { stopRuntime } from '@mkt/kit/runtime';
import { reviewsConsumer } from '../src/events/reviews.consumer';
import { eventually } from './paid-harness';
import { env, givenOffer, log, startConsultation, models } from './harness';

let app: Awaited<ReturnType<typeof startConsultation>>;
beforeAll(async () => {
  // No wallet: nothing here is booked.
  app = await startConsultation('http://127.0.0.1:9');
});
afterAll(async () => {
  await stopRuntime(app.started);
  await mongoose.disconnect();
});

/** `countsInRating` left out is an older producer's event: the review counts. */
const created = (entityId: string, rating: number, reviewId = uniqueName('rev'), countsInRating?: boolean) =>
  makeEvent(
    'review.created',
    { reviewId, entityType: 'consultation_service', entityId, rating, ...(countsInRating === undefined ? {} : { countsInRating }) },
    { source: 'review' },
  );
const visibility = (review: IntegrationEvent<'review.created'>, isActive: boolean, sequence: number, countsInRating?: boolean) =>
  makeEvent(
    'review.visibility_changed',
    { ...review.data, isActive, sequence, ...(countsInRating === undefined ? {} : { countsInRating }) },
    { source: 'review' },
  );
const handle = (event: IntegrationEvent<'review.created'> | IntegrationEvent<'review.visibility_changed'>) => {
  const handler = (reviewsConsumer(app.parts.ratings).handlers as Record<string, (e: unknown, ctx: { log: typeof log }) => Promise<void>>)[
    event.type
  ]!;
  return handler(event, { log });
};
const summaryOf = async (consultationId: string) => {
  const c = await models().Consultation.findById(consultationId, { averageRating: 1, totalReviews: 1 }).lean();
  return { averageRating: c!.averageRating, totalReviews: c!.totalReviews };
};

describe('review.visibility_changed', () => {
  test('hiding a review takes it out of the average, showing it again puts it back', async () => {
    const offer = await givenOffer(() => app);
    const [five, four, one] = [created(offer.consultationId, 5), created(offer.referenceId, 4), created(offer.consultationId, 1)];
    for (const event of [five, four, one]) await handle(event);
    expect(await summaryOf(offer.consultationId)).toEqual({ averageRating: 3.33, totalReviews: 3 });
    await handle(visibility(one, false, 1));
    expect(await summaryOf(offer.consultationId)).toEqual({ averageRating: 4.5, totalReviews: 2 });
    await handle(visibility(one, true, 2));
    expect(await summaryOf(offer.consultationId)).toEqual({ averageRating: 3.33, totalReviews: 3 });
  });

  test('the same event twice applies once; an older change arriving late undoes nothing', async () => {
    const offer = await givenOffer(() => app);
    const [five, two] = [created(offer.consultationId, 5), created(offer.consultationId, 2)];
    await handle(five);
    await handle(two);
    const hidden = visibility(two, false, 1);
    const shown = visibility(two, true, 2);
    const hiddenAgain = visibility(two, false, 3);
    await handle(hidden);
    await handle(hidden);
    expect(await summaryOf(offer.consultationId)).toEqual({ averageRating: 5, totalReviews: 1 });
    await handle(hiddenAgain);
    await handle(shown);
    expect(await summaryOf(offer.consultationId)).toEqual({ averageRating: 5, totalReviews: 1 });
    expect(await models().RatingEntry.findById(two.data.reviewId).lean()).toMatchObject({ isActive: false, visibilitySequence: 3 });
    await handle(two);
    expect(await summaryOf(offer.consultationId)).toEqual({ averageRating: 5, totalReviews: 1 });
  });

  test('a change arriving before its review.created makes the entry; the creation then changes nothing', async () => {
    const offer = await givenOffer(() => app);
    const three = created(offer.consultationId, 3);
    await handle(created(offer.consultationId, 5));
    await handle(visibility(three, false, 1));
    await handle(three);
    expect(await summaryOf(offer.consultationId)).toEqual({ averageRating: 5, totalReviews: 1 });
    await handle(visibility(three, true, 2));
    expect(await summaryOf(offer.consultationId)).toEqual({ averageRating: 4, totalReviews: 2 });
  });

  test('through the broker: applied; a poison message is dead-lettered and the consumer goes on', async () => {
    await app.bus.consume({ ...reviewsConsumer(app.parts.ratings), retryDelaysMs: [50] });
    const offer = await givenOffer(() => app);
    const two = created(offer.consultationId, 2);
    await app.bus.publish(created(offer.consultationId, 4));
    await app.bus.publish(two);
    const poison = { ...visibility(two, false, 1), data: { reviewId: two.data.reviewId, isActive: 'no' } };
    await app.bus.publishRaw(app.bus.names.events, 'review.visibility_changed', Buffer.from(JSON.stringify(poison)));
    await app.bus.publish(visibility(two, false, 1));
    expect(
      await eventually(
        () => summaryOf(offer.consultationId),
        (s) => s.totalReviews === 1 && s.averageRating === 4,
      ),
    ).toEqual({
      averageRating: 4,
      totalReviews: 1,
    });
    const deadLetters = await readQueue(testServers().amqpUrl, env.queue('consultation.reviews.dlq'));
    const dead = await deadLetters.waitFor((msg) => msg.json?.id === poison.id, 'the poison message');
    await deadLetters.close();
    expect(dead.json.data).toEqual({ reviewId: two.data.reviewId, isActive: 'no' });
  });
});

describe('reviews that do not count in the rating (farmed reviews)', () => {
  test('free places’ 5★ reviews leave the average and count as they were; a paying buyer’s review moves them', async () => {
    const offer = await givenOffer(() => app);
    await handle(created(offer.consultationId, 2, uniqueName('rev'), true));
    const farm = [1, 2, 3].map(() => created(offer.referenceId, 5, uniqueName('rev'), false));
    for (const event of farm) await handle(event);
    // Hiding and showing a farmed review again does not let it in either.
    await handle(visibility(farm[0]!, false, 1, false));
    await handle(visibility(farm[0]!, true, 2, false));
    expect(await summaryOf(offer.consultationId)).toEqual({ averageRating: 2, totalReviews: 1 });
    expect(await models().RatingEntry.countDocuments({ _id: { $in: farm.map((e) => e.data.reviewId) } })).toBe(0);
    await handle(created(offer.consultationId, 4, uniqueName('rev'), true));
    expect(await summaryOf(offer.consultationId)).toEqual({ averageRating: 3, totalReviews: 2 });
  });

  test('a review that starts to count (its buyer paid since) comes in by its numbered change, in the state it has', async () => {
    const offer = await givenOffer(() => app);
    await handle(created(offer.consultationId, 2));
    const [shown, hidden] = [
      created(offer.consultationId, 5, uniqueName('rev'), false),
      created(offer.consultationId, 1, uniqueName('rev'), false),
    ];
    await handle(shown);
    await handle(hidden);
    await handle(visibility(hidden, false, 1, false));
    expect(await summaryOf(offer.consultationId)).toEqual({ averageRating: 2, totalReviews: 1 });
    await handle(visibility(shown, true, 1, true));
    await handle(visibility(hidden, false, 2, true));
    expect(await summaryOf(offer.consultationId)).toEqual({ averageRating: 3.5, totalReviews: 2 });
    // Its late review.created (saying it did not count then) takes nothing away.
    await handle(shown);
    expect(await summaryOf(offer.consultationId)).toEqual({ averageRating: 3.5, totalReviews: 2 });
  });
});
