import mongoose from 'mongoose';
import { makeEvent, type IntegrationEvent } from '@mkt/contracts';
import { readQueue, testServers, uniqueName } from '@mkt/infra';
import { stopRuntime } from '@mkt/kit';
import { Consultation, RatingEntry } from '../src/db/setup.models';
import { reviewsConsumer } from '../src/events/reviews.consumer';
import { eventually } from './paid-harness';
import { env, givenOffer, log, startConsultation } from './harness';

let app: Awaited<ReturnType<typeof startConsultation>>;
beforeAll(async () => {
  // No wallet: nothing here is booked.
  app = await startConsultation('http://127.0.0.1:9');
});
afterAll(async () => {
  await stopRuntime(app.started);
  await mongoose.disconnect();
});

const created = (entityId: string, rating: number, reviewId = uniqueName('rev')) =>
  makeEvent('review.created', { reviewId, entityType: 'consultation_service', entityId, rating }, { source: 'test' });
const visibility = (review: IntegrationEvent<'review.created'>, isActive: boolean, sequence: number) =>
  makeEvent('review.visibility_changed', { ...review.data, isActive, sequence }, { source: 'test' });
const handle = (event: IntegrationEvent<'review.created'> | IntegrationEvent<'review.visibility_changed'>) => {
  const handler = (reviewsConsumer.handlers as Record<string, (e: unknown, ctx: { log: typeof log }) => Promise<void>>)[event.type]!;
  return handler(event, { log });
};
const summaryOf = async (consultationId: string) => {
  const c = await Consultation.findById(consultationId, { averageRating: 1, totalReviews: 1 }).lean();
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
    expect(await RatingEntry.findById(two.data.reviewId).lean()).toMatchObject({ isActive: false, visibilitySequence: 3 });
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
    await app.bus.consume({ ...reviewsConsumer, retryDelaysMs: [50] });
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
