import type { Channel } from 'amqplib';
import { CONSUMER_RETRY_POLICY, SUBSCRIPTION_LIST, buildAsyncApi } from '@mkt/contracts';
import { BusNames, MAIN_DELIVERY_LIMIT, assertExchanges, consumerQueuePlan } from '../src/bus/topology';
import { DEFAULT_RETRY_DELAYS_MS } from '../src/bus/consumer';

// The AsyncAPI document (contracts) describes what kit's bus declares and does; contracts cannot
// import kit, so this test holds the two together: a change to the topology or the retry policy
// that the document does not follow fails here.

const document = buildAsyncApi();
const names = new BusNames();

test('the retry delays and the delivery limit the document states are the consumer’s own', () => {
  expect(CONSUMER_RETRY_POLICY.retryDelaysMs).toEqual(DEFAULT_RETRY_DELAYS_MS);
  expect(CONSUMER_RETRY_POLICY.deliveryLimit).toBe(MAIN_DELIVERY_LIMIT);
});

test('the events exchange is declared as the channels’ binding says: topic, durable', async () => {
  const declared: Array<[string, string, unknown]> = [];
  const channel = {
    assertExchange: (name: string, type: string, options: unknown) => {
      declared.push([name, type, options]);
      return Promise.resolve({ exchange: name });
    },
  } as unknown as Channel;
  await assertExchanges(channel, names);
  const [, type, options] = declared.find(([name]) => name === names.events)!;
  const binding = (document.channels['identity.user.registered']!.bindings as { amqp: { exchange: Record<string, unknown> } }).amqp
    .exchange;
  expect(binding).toMatchObject({ name: names.events, type, durable: (options as { durable: boolean }).durable });
});

test.each(SUBSCRIPTION_LIST.map((subscription) => [subscription.queue]))(
  '%s: the queue, its bindings, retry queues and dead-letter queue are those kit declares',
  (queue) => {
    const subscription = SUBSCRIPTION_LIST.find((candidate) => candidate.queue === queue)!;
    const plans = consumerQueuePlan(queue, [...subscription.events], DEFAULT_RETRY_DELAYS_MS, names);
    const main = plans.find((plan) => plan.name === queue)!;
    const channel = document.channels[`queue.${queue}`]!;
    const binding = (channel.bindings as { amqp: Record<string, unknown> }).amqp;
    expect(binding['x-bindings']).toEqual(main.bindings);
    const operation = document.operations[`${queue}.receive`]!;
    const deadLetter = operation['x-dead-letter'] as { exchange: string; routingKey: string; queue: string };
    expect(deadLetter).toEqual({
      exchange: main.arguments['x-dead-letter-exchange'],
      routingKey: main.arguments['x-dead-letter-routing-key'],
      queue: plans.find((plan) => plan.bindings.some((bound) => bound.exchange === names.deadLetter))!.name,
    });
    expect(binding['x-dead-letter-queue']).toBe(deadLetter.queue);
    const retryQueues = plans.filter((plan) => plan.arguments['x-message-ttl'] !== undefined).map((plan) => plan.name);
    expect((operation['x-retry'] as { retryQueues: string[] }).retryQueues).toEqual(retryQueues);
  },
);
