import amqp, { type ChannelModel } from 'amqplib';
import mongoose, { Schema } from 'mongoose';
import pino from 'pino';
import { makeEvent, type IntegrationEvent } from '@mkt/contracts';
import { Bus, OutboxRelay, eventsWritten, pendingEventsField } from '@mkt/kit/bus';
import { ensureOutboxIndexes } from '../src/bus/outbox';
import { openDatabase } from '@mkt/kit/db';
import { startDisposableBroker, testEnv, testServers, uniqueName, waitFor, type BrokerHandle } from '@mkt/infra';

/** What the bus logs at warn and above, kept to check what a line carries. */
const logged: Array<{ msg?: string; err?: { message?: string; stack?: string } }> = [];
const log = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
const { mongoUrl, amqpUrl } = testServers();
/** A namespace of this file's own: no other file's review.created reaches its queue, nor its dead letters. */
const env = testEnv('kit_bus');

// A document that changes state and records its events in the same write.
const Order = mongoose.model(
  'Order',
  new Schema({ _id: { type: String, required: true }, pendingEvents: pendingEventsField }, { versionKey: false }),
);
// What a consumer builds from events; appliedEventIds makes it idempotent.
const Tally = mongoose.model(
  'Tally',
  new Schema({ _id: String, count: { type: Number, default: 0 }, appliedEventIds: { type: [String], default: [] } }, { versionKey: false }),
);

async function applyOnce(event: IntegrationEvent<'review.created'>): Promise<void> {
  await Tally.updateOne(
    { _id: event.data.entityId, appliedEventIds: { $ne: event.id } },
    { $inc: { count: 1 }, $push: { appliedEventIds: event.id } },
  );
}

function reviewEvent(entityId: string) {
  return makeEvent(
    'review.created',
    { reviewId: uniqueName('rev'), entityType: 'consultation_service', entityId, rating: 5 },
    { source: 'review' },
  );
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  await waitFor(check, { what: 'the condition', timeoutMs, intervalMs: 100 });
}

async function tallyOf(id: string): Promise<number> {
  return (await Tally.findById(id).lean())?.count ?? 0;
}

let bus: Bus;
let admin: ChannelModel;
const queue = uniqueName('kit.test');
const attempts = new Map<string, number>();
const handled = new Map<string, number>();

beforeAll(async () => {
  await openDatabase(mongoose.connection, { url: mongoUrl, dbName: env.dbName, log });
  await Tally.createIndexes();
  bus = new Bus({ url: amqpUrl, log, namespace: env.namespace });
  await bus.consume({
    subscription: { queue, events: ['review.created'] },
    retryDelaysMs: [50, 50],
    handlers: {
      'review.created': async (event) => {
        attempts.set(event.data.entityId, (attempts.get(event.data.entityId) ?? 0) + 1);
        if (event.data.entityId.startsWith('failing')) throw new Error('handler broke');
        await Tally.findOneAndUpdate({ _id: event.data.entityId }, { $setOnInsert: { count: 0 } }, { upsert: true });
        await applyOnce(event);
        handled.set(event.data.entityId, (handled.get(event.data.entityId) ?? 0) + 1);
      },
    },
  });
  await bus.start();
  admin = await amqp.connect(amqpUrl);
});

afterAll(async () => {
  await bus.close();
  await admin.close();
  await mongoose.disconnect();
});

async function deadLettered(): Promise<Array<{ content: string; headers: Record<string, unknown> }>> {
  const channel = await admin.createChannel();
  const out = [];
  const deadLetterQueue = env.queue(`${queue}.dlq`);
  for (let msg = await channel.get(deadLetterQueue); msg; msg = await channel.get(deadLetterQueue)) {
    out.push({ content: msg.content.toString(), headers: msg.properties.headers ?? {} });
    channel.ack(msg);
  }
  await channel.close();
  return out;
}

describe('event bus', () => {
  test('an event written with its state change is published with confirm, consumed, and removed from the outbox', async () => {
    const entity = uniqueName('entity');
    const order = await Order.create({ _id: uniqueName('order'), pendingEvents: [reviewEvent(entity)] });
    const relay = new OutboxRelay({ bus, log, sources: [{ name: 'orders', model: Order }] });
    await relay.flush(Order, order._id);
    await eventually(async () => (await tallyOf(entity)) === 1);
    expect((await Order.findById(order._id).lean())?.pendingEvents).toEqual([]);
  });

  test('a document flushed as the write returned it is published without a read, every event in order, and emptied', async () => {
    const entities = [uniqueName('first'), uniqueName('second'), uniqueName('third')];
    const order = await Order.create({ _id: uniqueName('order'), pendingEvents: entities.map(reviewEvent) });
    const relay = new OutboxRelay({ bus, log, sources: [{ name: 'orders', model: Order }] });
    await ensureOutboxIndexes([{ name: 'orders', model: Order }]);
    const lean = order.toObject() as { _id: string; pendingEvents: IntegrationEvent[] };
    await relay.flush(Order, lean);
    for (const entity of entities) await eventually(async () => (await tallyOf(entity)) === 1);
    expect((await Order.findById(order._id).lean())?.pendingEvents).toEqual([]);
    expect((await Order.collection.indexes()).map((index) => index.name)).toContain('outbox_pending');
  });

  test('a write announced by its repository (eventsWritten) is published by the relay of its model: no sweep, no flush by the caller', async () => {
    // Never started and an hour of grace: no sweep can publish it, only the announcement.
    const relay = new OutboxRelay({
      bus,
      log,
      sources: [{ name: 'orders', model: Order }],
      sweepIntervalMs: 3_600_000,
      graceMs: 3_600_000,
    });
    const entities = [uniqueName('by-id'), uniqueName('as-written')];
    const byId = await Order.create({ _id: uniqueName('order'), pendingEvents: [reviewEvent(entities[0]!)] });
    eventsWritten(Order, String(byId._id));
    const asWritten = await Order.findOneAndUpdate(
      { _id: uniqueName('order') },
      { $push: { pendingEvents: reviewEvent(entities[1]!) } },
      { upsert: true, new: true },
    ).lean<{ _id: string; pendingEvents: IntegrationEvent[] }>();
    eventsWritten(Order, asWritten!);
    for (const entity of entities) await eventually(async () => (await tallyOf(entity)) === 1);
    for (const id of [byId._id, asWritten!._id]) expect((await Order.findById(id).lean())?.pendingEvents).toEqual([]);
    // A model no relay publishes from: nothing happens, nothing is thrown (the caller never waits on it).
    const Unrelayed = mongoose.model('Unrelayed', new Schema({ _id: String, pendingEvents: pendingEventsField }, { versionKey: false }));
    const lone = await Unrelayed.create({ _id: uniqueName('lone'), pendingEvents: [reviewEvent(uniqueName('lone'))] });
    expect(() => eventsWritten(Unrelayed, String(lone._id))).not.toThrow();
    await relay.stop();
  });

  test('the same event delivered twice is applied once', async () => {
    const entity = uniqueName('entity');
    const event = reviewEvent(entity);
    await bus.publish(event);
    await bus.publish(event);
    await eventually(async () => (handled.get(entity) ?? 0) === 2);
    expect(await tallyOf(entity)).toBe(1);
  });

  test('a poison message is dead-lettered and the consumer keeps working', async () => {
    await bus.publishRaw(bus.names.events, 'review.created', Buffer.from('{not json'), { messageId: 'poison-1' });
    const bad = { ...reviewEvent('x'), data: { rating: 'five' } };
    await bus.publishRaw(bus.names.events, 'review.created', Buffer.from(JSON.stringify(bad)), { messageId: 'poison-2' });
    const entity = uniqueName('entity');
    await bus.publish(reviewEvent(entity));
    await eventually(async () => (await tallyOf(entity)) === 1);
    let dead: Awaited<ReturnType<typeof deadLettered>> = [];
    const poison = () => dead.filter((m) => m.content === '{not json' || m.content.includes(bad.id));
    await eventually(async () => {
      dead = dead.concat(await deadLettered());
      return poison().length === 2;
    });
    expect(poison().every((m) => typeof m.headers['x-error'] === 'string')).toBe(true);
  });

  test('a failing handler is retried a bounded number of times, then dead-lettered', async () => {
    const entity = uniqueName('failing');
    const event = reviewEvent(entity);
    await bus.publish(event);
    let dead: Awaited<ReturnType<typeof deadLettered>> = [];
    await eventually(async () => {
      dead = dead.concat(await deadLettered());
      return dead.some((m) => m.content.includes(event.id));
    });
    expect(attempts.get(entity)).toBe(3); // the first try and two retries
    // The log keeps the error itself, stack included: a message alone says nothing of where it broke.
    const line = logged.find((entry) => entry.msg === 'message dead-lettered' && entry.err?.message === 'handler broke');
    expect(line?.err?.stack).toContain('bus.test.ts');
    // No try after the dead letter: a later failing event goes the whole way (every retry queue
    // after this one's) to the dead letters, and by then this one has still had three.
    const later = reviewEvent(uniqueName('failing'));
    await bus.publish(later);
    await eventually(async () => {
      dead = dead.concat(await deadLettered());
      return dead.some((m) => m.content.includes(later.id));
    });
    expect(attempts.get(entity)).toBe(3);
  });
});

describe('when the broker stops and starts again', () => {
  let broker: BrokerHandle;
  let ownBus: Bus;
  let relay: OutboxRelay;

  beforeAll(async () => {
    broker = await startDisposableBroker();
  }, 120_000);

  afterAll(async () => {
    await relay?.stop();
    await ownBus?.close();
    await broker?.stop();
  }, 60_000);

  /** A bus on the disposable broker, started, whose consumer notes the entity of each review.created. */
  async function startedBus(): Promise<{ restarting: Bus; seen: string[] }> {
    const restarting = new Bus({ url: broker.url, log, minReconnectDelayMs: 100, maxReconnectDelayMs: 500, confirmTimeoutMs: 2_000 });
    const seen: string[] = [];
    await restarting.consume({
      subscription: { queue: uniqueName('kit.restart'), events: ['review.created'] },
      handlers: {
        'review.created': async (event) => {
          seen.push(event.data.entityId);
        },
      },
    });
    await restarting.start();
    return { restarting, seen };
  }

  test('events kept in the outbox while it was down are published, and the consumer resumes', async () => {
    const { restarting, seen } = await startedBus();
    ownBus = restarting;
    relay = new OutboxRelay({ bus: ownBus, log, sources: [{ name: 'orders', model: Order }], sweepIntervalMs: 200, graceMs: 0 });
    relay.start();

    const before = uniqueName('before');
    await Order.create({ _id: uniqueName('order'), pendingEvents: [reviewEvent(before)] });
    await eventually(async () => seen.includes(before));

    await broker.stopBroker();
    await eventually(async () => !ownBus.isConnected());
    const during = uniqueName('during');
    const order = await Order.create({ _id: uniqueName('order'), pendingEvents: [reviewEvent(during)] });
    await relay.flush(Order, order._id);
    expect((await Order.findById(order._id).lean())?.pendingEvents).toHaveLength(1);

    await broker.startBroker();
    await eventually(async () => ownBus.isConnected(), 60_000);
    await eventually(async () => seen.includes(during), 30_000);
    await eventually(async () => ((await Order.findById(order._id).lean())?.pendingEvents as unknown[]).length === 0);

    const after = uniqueName('after');
    await ownBus.publish(reviewEvent(after));
    await eventually(async () => seen.includes(after));
  }, 180_000);

  test('a flush that failed while it was away is published as soon as it is back, not after the grace period and the next sweep', async () => {
    const { restarting, seen } = await startedBus();
    // An hour of grace and an hour between sweeps: only the sweep on reconnect can publish it.
    const hourly = new OutboxRelay({
      bus: restarting,
      log,
      sources: [{ name: 'orders', model: Order }],
      sweepIntervalMs: 3_600_000,
      graceMs: 3_600_000,
    });
    hourly.start();
    try {
      await broker.stopBroker();
      await eventually(async () => !restarting.isConnected());
      const during = uniqueName('during');
      const order = await Order.create({ _id: uniqueName('order'), pendingEvents: [reviewEvent(during)] });
      await hourly.flush(Order, order._id);
      expect((await Order.findById(order._id).lean())?.pendingEvents).toHaveLength(1);

      await broker.startBroker();
      await eventually(async () => seen.includes(during), 60_000);
      await eventually(async () => ((await Order.findById(order._id).lean())?.pendingEvents as unknown[]).length === 0);
    } finally {
      await hourly.stop();
      await restarting.close();
    }
  }, 180_000);
});
