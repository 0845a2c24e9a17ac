import amqp, { type ChannelModel } from 'amqplib';
import pino from 'pino';
import { SUBSCRIPTIONS, SUBSCRIPTION_LIST, makeEvent, type IntegrationEvent } from '@mkt/contracts';
import { Bus, defineConsumer, type ConsumerSpec } from '@mkt/kit/bus';
import { BusNames, assertExchanges, consumerQueuePlan, migrateQueue, subscriptionQueuePlan, type QueuePlan } from '../src/bus/topology';
import { testEnv, testServers, uniqueName, waitFor } from '@mkt/infra';

// Every service declares every consuming queue of the platform (SUBSCRIPTIONS) before it
// publishes: on a fresh broker, an event published before its consumer ever ran waits in the
// consumer's queue instead of being dropped as unroutable.

const { amqpUrl } = testServers();
const logged: Array<{ level: number; msg?: string; queue?: string }> = [];
const log = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line)) });

let admin: ChannelModel;
const buses: Bus[] = [];
function busOf(namespace: string, extra: Partial<ConstructorParameters<typeof Bus>[0]> = {}): Bus {
  const bus = new Bus({ url: amqpUrl, log, namespace, ...extra });
  buses.push(bus);
  return bus;
}

beforeAll(async () => {
  admin = await amqp.connect(amqpUrl);
});
afterAll(async () => {
  for (const bus of buses) await bus.close();
  await admin.close();
});

function registered(): IntegrationEvent<'identity.user.registered'> {
  const userId = uniqueName('user');
  return makeEvent(
    'identity.user.registered',
    { userId, referenceId: `ref-${userId}`, email: `${userId}@marketplace.test`, fullName: 'First Before Consumer', role: 'buyer' },
    { source: 'gateway' },
  );
}

test('an event published by a publisher-only service before its consumer ever ran reaches the consumer when it starts', async () => {
  const env = testEnv('kit_topo_fresh');
  // The gateway, say: no consumers, the first on a broker that has never seen this namespace.
  const publisher = busOf(env.namespace);
  await publisher.start();
  const event = registered();
  await publisher.publish(event);
  await publisher.close();

  // The CRM starts for the first time only now.
  const seen: string[] = [];
  const consumer = busOf(env.namespace);
  await consumer.consume(
    defineConsumer({
      subscription: SUBSCRIPTIONS['crm.users'],
      handlers: {
        'identity.user.registered': async (received) => {
          seen.push(received.id);
        },
      },
    }),
  );
  await consumer.start();
  await waitFor(() => seen.includes(event.id), { what: 'the event published before the consumer existed', timeoutMs: 15_000 });
  expect(seen).toEqual([event.id]);
});

test('every subscription queue and its dead-letter queue exist, bound, after any service connects', async () => {
  const env = testEnv('kit_topo_all');
  await busOf(env.namespace).start();
  const channel = await admin.createChannel();
  channel.on('error', () => undefined); // a missing queue fails its check below
  for (const subscription of SUBSCRIPTION_LIST) {
    expect(await channel.checkQueue(env.queue(subscription.queue))).toMatchObject({ messageCount: 0 });
    expect(await channel.checkQueue(env.queue(`${subscription.queue}.dlq`))).toMatchObject({ messageCount: 0 });
  }
  await channel.close();
});

test('what every service declares is exactly what the consumer declares, whatever its retry delays', () => {
  const names = new BusNames('ns');
  for (const subscription of SUBSCRIPTION_LIST) {
    const declared = subscriptionQueuePlan(subscription, names);
    for (const delays of [[], [50], [1_000, 5_000, 30_000]]) {
      const own = consumerQueuePlan(names.of(subscription.queue), [...subscription.events], delays, names);
      expect(own.filter((plan) => !plan.name.includes('.retry.'))).toEqual(declared);
    }
  }
});

test('a consumer whose handlers differ from its subscription is refused', async () => {
  const bus = busOf(testEnv('kit_topo_spec').namespace);
  const spec: ConsumerSpec = { subscription: SUBSCRIPTIONS['crm.users'], handlers: { 'review.created': async () => {} } };
  await expect(bus.consume(spec)).rejects.toThrow(/handlers \[review.created\] differ from its subscription \[identity.user.registered\]/);
});

test('a subscription queue left classic keeps a publisher-only service off the broker with the migration named, until migrated', async () => {
  const env = testEnv('kit_topo_classic');
  const names = new BusNames(env.namespace);
  const [, main] = subscriptionQueuePlan(SUBSCRIPTIONS['review.users'], names) as [QueuePlan, QueuePlan];
  const channel = await admin.createChannel();
  await assertExchanges(channel, names);
  // As the version before quorum queues declared it.
  await channel.assertQueue(main.name, { durable: true, arguments: { 'x-dead-letter-exchange': names.deadLetter } });
  await channel.close();

  const publisher = busOf(env.namespace, { maxReconnectDelayMs: 300 });
  void publisher.start(60_000).catch(() => undefined);
  const refusals = () => logged.filter((line) => line.queue === main.name && line.level >= 50);
  // Refused, and tried again (no crash): the outbox keeps its events meanwhile.
  await waitFor(() => refusals().length >= 2, { what: 'the refusal, twice', timeoutMs: 15_000 });
  expect(refusals()[0]?.msg).toContain('node scripts/migrate-queues.mjs');
  expect(publisher.isConnected()).toBe(false);

  expect((await migrateQueue(admin, main)).outcome).toBe('migrated');
  await publisher.waitUntilConnected(15_000);
  const event = registered();
  await publisher.publish(event);
  const check = await admin.createChannel();
  await waitFor(async () => (await check.checkQueue(main.name)).messageCount === 1, { what: 'the event in the migrated queue' });
  await check.close();
});
