import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import pino from 'pino';
import { Bus } from '@mkt/kit/bus';
import {
  BusNames,
  MAIN_DELIVERY_LIMIT,
  assertExchanges,
  consumerQueuePlan,
  migrateQueue,
  queueNames,
  temporaryQueueName,
  type QueuePlan,
} from '../src/bus/topology';
import { classicQueueArguments, queueAccepts, takeMessageIds, testEnv, testServers, uniqueName, waitFor } from '@mkt/infra';

// Every queue a consumer declares is a durable quorum queue; a poison message redelivered by the
// broker itself ends in the dead-letter queue, which keeps its messages however often it is
// looked at; a classic queue from before is refused with the migration named, and the migration
// moves it to quorum without losing a message, also one published while it runs.

const { amqpUrl } = testServers();
const logged: Array<{ level: number; msg?: string; queue?: string }> = [];
const log = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
const env = testEnv('kit_quorum');
const names = new BusNames(env.namespace);
const RETRY_DELAYS = [60_000, 120_000];

let admin: ChannelModel;
let channel: ConfirmChannel;

beforeAll(async () => {
  admin = await amqp.connect(amqpUrl);
  channel = await admin.createConfirmChannel();
  await assertExchanges(channel, names);
});
afterAll(async () => {
  await admin.close();
});

const declaresAs = (queue: string, args: Record<string, unknown>): Promise<boolean> => queueAccepts(admin, queue, args);

/** `quorum` when the planned (quorum) arguments are accepted, `classic` when the old ones are. */
async function typeOf(plan: QueuePlan): Promise<string> {
  if (await declaresAs(plan.name, plan.arguments)) return 'quorum';
  return (await declaresAs(plan.name, classicArguments(plan))) ? 'classic' : 'neither';
}

/** The arguments the version before quorum queues declared. */
const classicArguments = (plan: QueuePlan): Record<string, unknown> => classicQueueArguments(plan.arguments);

async function exists(queue: string): Promise<boolean> {
  const probe = await admin.createChannel();
  probe.on('error', () => undefined);
  try {
    await probe.checkQueue(queue);
    await probe.close();
    return true;
  } catch {
    return false;
  }
}

const drain = (queue: string): Promise<string[]> => takeMessageIds(channel, queue);

async function publish(exchange: string, routingKey: string, messageId: string): Promise<void> {
  channel.publish(exchange, routingKey, Buffer.from('{}'), { messageId, persistent: true });
  await channel.waitForConfirms();
}

test('every queue of a consumer is a quorum queue', async () => {
  const queue = env.queue(uniqueName('kit.qq'));
  const bus = new Bus({ url: amqpUrl, log, namespace: env.namespace });
  await bus.consume({
    subscription: { queue: queue.slice(env.namespace.length + 1), events: ['review.created'] },
    retryDelaysMs: RETRY_DELAYS,
    handlers: { 'review.created': async () => {} },
  });
  await bus.start();
  await bus.close();
  const plans = consumerQueuePlan(queue, ['review.created'], RETRY_DELAYS, names);
  expect(plans.map((plan) => plan.name).sort()).toEqual([`${queue}`, `${queue}.dlq`, `${queue}.retry.1`, `${queue}.retry.2`]);
  for (const plan of plans) expect(await typeOf(plan)).toBe('quorum');
});

test('a message the broker redelivers too often goes to the dead-letter queue, which keeps it however often it is listed', async () => {
  const queue = env.queue(uniqueName('kit.poison'));
  const plans = consumerQueuePlan(queue, ['kit.poison.test'], [50], names);
  for (const plan of plans) await migrateQueue(admin, plan);
  await publish(names.events, 'kit.poison.test', 'crashes-the-handler');
  // Every delivery returned unacked, as when the handler takes the process down each time.
  let deliveries = 0;
  await waitFor(
    async () => {
      const msg = await channel.get(queue);
      if (!msg) return true;
      deliveries += 1;
      channel.nack(msg, false, true);
      return false;
    },
    { what: 'the main queue to give the message up', timeoutMs: 30_000, intervalMs: 10 },
  );
  expect(deliveries).toBe(MAIN_DELIVERY_LIMIT + 1);
  const dlq = `${queue}.dlq`;
  await waitFor(async () => (await channel.checkQueue(dlq)).messageCount === 1, { what: 'the dead letter', timeoutMs: 10_000 });
  // `npm run dlq -- list` reads with get and puts back: 4.x's default limit would drop it after 20.
  for (let look = 0; look < 30; look += 1) {
    const msg = await channel.get(dlq);
    expect(msg && msg.properties.messageId).toBe('crashes-the-handler');
    channel.nack(msg as amqp.GetMessage, false, true);
  }
  expect(await drain(dlq)).toEqual(['crashes-the-handler']);
});

/** The queues as the version before quorum queues declared them. */
async function declareClassic(plans: QueuePlan[]): Promise<void> {
  for (const plan of plans) {
    await channel.assertQueue(plan.name, { durable: true, arguments: classicArguments(plan) });
    for (const { exchange, routingKey } of plan.bindings) await channel.bindQueue(plan.name, exchange, routingKey);
  }
}

test('a classic queue is refused with the migration named; the migration keeps every message, also those published meanwhile', async () => {
  const short = uniqueName('kit.migrate');
  const queue = env.queue(short);
  const plans = consumerQueuePlan(queue, ['kit.migrate.test'], RETRY_DELAYS, names);
  await declareClassic(plans);
  const all = queueNames(queue, RETRY_DELAYS.length);
  for (const plan of plans) expect(await typeOf(plan)).toBe('classic');
  for (let i = 0; i < 5; i += 1) await publish(names.events, 'kit.migrate.test', `before-${i}`);
  await publish(names.deadLetter, queue, 'dead-before');
  await publish('', all.retry[0]!, 'retrying-before');

  // This version's consumer cannot declare it: it says what to run and stays off the queue.
  const bus = new Bus({ url: amqpUrl, log, namespace: env.namespace, maxReconnectDelayMs: 300 });
  const handled: string[] = [];
  await bus.consume({
    subscription: { queue: short, events: ['review.created'] },
    retryDelaysMs: RETRY_DELAYS,
    handlers: {
      'review.created': async (event) => {
        handled.push(event.id);
      },
    },
  });
  // Never connects while the queue is classic: its wait for the connection ends in a rejection.
  void bus.start(15_000).catch(() => undefined);
  try {
    const refusal = await waitFor(() => logged.find((line) => line.queue === all.retry[0] && line.level >= 50), {
      what: 'the refusal in the log',
      timeoutMs: 15_000,
    });
    expect(refusal?.msg).toContain('node scripts/migrate-queues.mjs');
    expect(refusal?.msg).toContain('docs/rabbitmq-queues.md');
    expect(bus.isConnected()).toBe(false);
    await bus.close();

    // Published at every step of the migration: none may be lost.
    let during = 0;
    const onStep = async () => {
      await publish(names.events, 'kit.migrate.test', `during-${during}`);
      during += 1;
    };
    const results = [];
    for (const plan of plans) results.push(await migrateQueue(admin, plan, { onStep }));
    expect(results.map((r) => r.outcome)).toEqual(plans.map(() => 'migrated'));
    for (const plan of plans) expect(await typeOf(plan)).toBe('quorum');
    for (const name of [all.main, all.deadLetter, ...all.retry]) expect(await exists(temporaryQueueName(name))).toBe(false);

    // Run again: nothing to do.
    for (const plan of plans) expect((await migrateQueue(admin, plan)).outcome).toBe('already-current');

    expect(await drain(all.retry[0]!)).toEqual(['retrying-before']);
    expect(await drain(all.deadLetter)).toEqual(['dead-before']);
    const main = await drain(all.main);
    const expected = [...[0, 1, 2, 3, 4].map((i) => `before-${i}`), ...Array.from({ length: during }, (_, i) => `during-${i}`)];
    // An event published while the queue had two homes may come twice (consumers are idempotent).
    expect([...new Set(main)].sort()).toEqual(expected.sort());
    expect(during).toBe(plans.length * 5);
  } finally {
    await bus.close();
  }
});

test('an interrupted migration is finished by running it again', async () => {
  const queue = env.queue(uniqueName('kit.resume'));
  const [plan] = consumerQueuePlan(queue, ['kit.resume.test'], [], names).slice(-1);
  // Interrupted after the new queue was declared: the messages still wait in the temporary one.
  await channel.assertQueue(plan!.name, { durable: true, arguments: plan!.arguments });
  const temporary = temporaryQueueName(plan!.name);
  await channel.assertQueue(temporary, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await channel.bindQueue(temporary, names.events, 'kit.resume.test');
  for (let i = 0; i < 3; i += 1) await publish(names.events, 'kit.resume.test', `waiting-${i}`);
  const result = await migrateQueue(admin, plan!);
  expect(result).toMatchObject({ outcome: 'resumed', moved: 3 });
  expect((await drain(plan!.name)).sort()).toEqual(['waiting-0', 'waiting-1', 'waiting-2']);
  expect(await exists(temporary)).toBe(false);
});
