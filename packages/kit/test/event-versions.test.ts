import amqp, { type ChannelModel } from 'amqplib';
import pino from 'pino';
import {
  EVENT_CONTRACTS,
  ReviewCreatedData,
  SUBSCRIPTION_LIST,
  makeEventOf,
  routingKeyOf,
  type EventRegistry,
  type IntegrationEvent,
} from '@mkt/contracts';
import { Bus } from '@mkt/kit/bus';
import { consumerQueuePlan, subscriptionQueuePlan, BusNames } from '../src/bus/topology';
import { getMetrics } from '@mkt/kit/metrics';
import { testEnv, testServers, uniqueName, waitFor } from '@mkt/infra';

// Versions on the wire, on a real broker: a producer publishes version 1 and version 2 of one
// fact (`review.created` v1 under its type, v2 under `review.created.v2`); a consumer that reads
// only v1 and one that reads v2 each apply exactly their version. A v1-only queue that is also
// bound to the v2 key (a newer release declared it, then was rolled back) acks and skips the v2
// copy instead of dead-lettering it.
const { amqpUrl } = testServers();
const env = testEnv('kit_versions');
const log = pino({ level: 'warn' });

// A version 2 the platform has not released: the rating renamed to `stars`.
const ReviewCreatedV2 = ReviewCreatedData.omit({ rating: true }).extend({ stars: ReviewCreatedData.shape.rating });
const contracts: EventRegistry = { ...EVENT_CONTRACTS, 'review.created': { 1: ReviewCreatedData, 2: ReviewCreatedV2 } };

const v1Queue = uniqueName('kit.v1');
const v2Queue = uniqueName('kit.v2');
const seen = { v1: [] as Array<IntegrationEvent<'review.created'>>, v2: [] as Array<IntegrationEvent<'review.created'>> };
let bus: Bus;
let admin: ChannelModel;

beforeAll(async () => {
  bus = new Bus({ url: amqpUrl, log, namespace: env.namespace, subscriptions: [] });
  const record = (into: Array<IntegrationEvent<'review.created'>>) => ({
    'review.created': async (event: IntegrationEvent<'review.created'>) => void into.push(event),
  });
  await bus.consume({ subscription: { queue: v1Queue, events: ['review.created'] }, handlers: record(seen.v1), contracts });
  await bus.consume({
    subscription: { queue: v2Queue, events: ['review.created'], versions: { 'review.created': [2] } },
    handlers: record(seen.v2),
    contracts,
  });
  await bus.start();
  admin = await amqp.connect(amqpUrl);
});

afterAll(async () => {
  await bus.close();
  await admin.close();
});

/** One fact, published in both versions, as a producer does while a consumer still reads v1. */
async function publishBoth(entityId: string): Promise<void> {
  const fact = { reviewId: uniqueName('rev'), entityType: 'consultation_service', entityId };
  await bus.publish(makeEventOf(contracts, 'review.created', { ...fact, rating: 4 }, { source: 'review' }));
  await bus.publish(makeEventOf(contracts, 'review.created', { ...fact, stars: 4 }, { source: 'review', version: 2 }));
}

test('the queue plan binds version 1 under the bare type, version 2 under <type>.v2; a v1-only plan is unchanged', () => {
  const names = new BusNames('ns');
  expect(routingKeyOf('review.created', 1)).toBe('review.created');
  expect(routingKeyOf('review.created', 2)).toBe('review.created.v2');
  const v1Only = subscriptionQueuePlan({ queue: 'crm.bookings', events: ['review.created', 'review.visibility_changed'] }, names);
  expect(v1Only).toEqual(consumerQueuePlan('ns.crm.bookings', ['review.created', 'review.visibility_changed'], [], names));
  const both = subscriptionQueuePlan({ queue: 'crm.bookings', events: ['review.created'], versions: { 'review.created': [1, 2] } }, names);
  expect(both.at(-1)!.bindings.map((b) => b.routingKey)).toEqual(['review.created', 'review.created.v2']);
  expect(both.map((plan) => plan.arguments)).toEqual(v1Only.map((plan) => plan.arguments));
  // Every queue of the platform reads version 1 only: declared exactly as before versions existed.
  for (const subscription of SUBSCRIPTION_LIST)
    expect(subscriptionQueuePlan(subscription, names)).toEqual(
      consumerQueuePlan(names.of(subscription.queue), [...subscription.events], [], names),
    );
});

test('a v1 consumer and a v2 consumer each apply exactly their version of one fact', async () => {
  await publishBoth('first');
  await publishBoth('second');
  const received = () => seen.v1.length >= 2 && seen.v2.length >= 2;
  await waitFor(async () => received(), { what: 'both versions of both facts', timeoutMs: 15_000, intervalMs: 50 });
  // Each queue is FIFO: a copy of the other version would have arrived before the second fact's.
  expect(seen.v1.map((e) => [e.version, e.data.entityId, e.data.rating])).toEqual([
    [1, 'first', 4],
    [1, 'second', 4],
  ]);
  expect(seen.v2.map((e) => [e.version, e.data.entityId, (e.data as unknown as { stars: number }).stars])).toEqual([
    [2, 'first', 4],
    [2, 'second', 4],
  ]);
  expect(seen.v2[0]!.data).not.toHaveProperty('rating');
});

test('a v1-only queue bound to the v2 key too acks and skips the v2 copy: no dead letter, a metric', async () => {
  const channel = await admin.createChannel();
  const queue = env.queue(v1Queue);
  await channel.bindQueue(queue, bus.names.events, routingKeyOf('review.created', 2));
  const skipped = async () =>
    (await getMetrics().eventsConsumed.get()).values.find((v) => v.labels.queue === queue && v.labels.outcome === 'skipped_version')
      ?.value ?? 0;
  const before = await skipped();
  const count = seen.v1.length;
  await publishBoth('third');
  await publishBoth('fourth');
  await waitFor(async () => seen.v1.length >= count + 2, { what: 'the v1 copies', timeoutMs: 15_000, intervalMs: 50 });
  await waitFor(async () => (await skipped()) >= before + 2, { what: 'the v2 copies skipped', timeoutMs: 15_000, intervalMs: 50 });
  expect(seen.v1.slice(count).map((e) => [e.version, e.data.entityId])).toEqual([
    [1, 'third'],
    [1, 'fourth'],
  ]);
  expect((await channel.checkQueue(`${queue}.dlq`)).messageCount).toBe(0);
  expect((await channel.checkQueue(queue)).messageCount).toBe(0);
  await channel.close();
});

test('a version this queue does not read, under another version’s key (a forged or misrouted copy), is dead-lettered, not skipped', async () => {
  const channel = await admin.createChannel();
  const queue = env.queue(v1Queue);
  const fact = { reviewId: uniqueName('rev'), entityType: 'consultation_service', entityId: 'misrouted', stars: 2 };
  const event = makeEventOf(contracts, 'review.created', fact, { source: 'review', version: 2 });
  const count = seen.v1.length;
  // A version 2 body under the version 1 key: what a relay that routes by type alone would send.
  await bus.publishRaw(bus.names.events, 'review.created', Buffer.from(JSON.stringify(event)), { messageId: event.id });
  await waitFor(async () => (await channel.checkQueue(`${queue}.dlq`)).messageCount === 1, {
    what: 'the misrouted copy dead-lettered',
    timeoutMs: 15_000,
    intervalMs: 50,
  });
  const dead = await channel.get(`${queue}.dlq`, { noAck: false });
  expect(dead && String(dead.properties.headers?.['x-error'])).toContain('arrived under review.created, not its own key review.created.v2');
  if (dead) channel.ack(dead);
  expect(seen.v1.length).toBe(count);
  await channel.close();
});
