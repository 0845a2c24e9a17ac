/**
 * Who may publish what, against a real RabbitMQ of the file's own (the production names, no
 * namespace) with a user per service as `npm start`, compose and k8s give them: a service forging
 * another's money-moving event is refused by the broker on the events exchange, and refused by
 * the consumer when it slips the event straight into the consumer's queue through the default
 * exchange; the owner's own event still gets through.
 */
import amqp from 'amqplib';
import { randomUUID } from 'node:crypto';
import {
  busUserOf,
  EVENT_PRODUCERS,
  makeEvent,
  routingKeyOf,
  SUBSCRIPTIONS,
  type EventData,
  type EventType,
  type IntegrationEvent,
  type Service,
  type Subscription,
} from '@mkt/contracts';
import { provisionBusUsers, readQueue, startDisposableBroker, waitFor, type BrokerHandle, type BusUsers } from '@mkt/infra';
import pino from 'pino';
import { Bus, defineConsumer, type ConsumerSpec } from '@mkt/kit/bus';
import { getMetrics } from '@mkt/kit/metrics';

jest.setTimeout(180_000);

const log = pino({ level: 'silent' });
let broker: BrokerHandle;
let users: BusUsers;
const buses: Bus[] = [];

beforeAll(async () => {
  broker = await startDisposableBroker();
  users = await provisionBusUsers(broker.ctl!, broker.url);
});

afterAll(async () => {
  for (const bus of buses) await bus.close();
  await broker?.stop();
});

const id = () => randomUUID();
const now = () => new Date().toISOString();
const SAMPLES: { [T in EventType]?: EventData<T> } = {
  'consultation.booking.cancelled': { bookingId: id(), sellerId: id(), buyerId: id(), refundAmountMinor: 100_00, totalAmountMinor: 100_00 },
  'consultation.session.completed': {
    sessionId: id(),
    consultationId: id(),
    sellerId: id(),
    buyerIds: [id()],
    endedAt: now(),
    bookingIds: [id()],
  },
  'consultation.session.no_show': { sessionId: id(), consultationId: id(), sellerId: id(), buyerIds: [id()], bookingIds: [id()] },
  'review.created': { reviewId: id(), entityType: 'consultation', entityId: id(), rating: 1 },
  'wallet.booking_payment.captured': {
    bookingId: id(),
    buyerId: id(),
    sellerId: id(),
    amountMinor: 100_00,
    feeMinor: 10_00,
    currency: 'ETB',
  },
};

/** The money-moving events, the queue that acts on each (none: nobody consumes it yet) and a service that forges it. */
const FORGED: Array<{ type: EventType; queue?: Subscription; forger: Service }> = [
  { type: 'consultation.booking.cancelled', queue: SUBSCRIPTIONS['wallet.bookings'], forger: 'crm' },
  { type: 'consultation.session.completed', queue: SUBSCRIPTIONS['wallet.bookings'], forger: 'review' },
  { type: 'consultation.session.no_show', queue: SUBSCRIPTIONS['wallet.bookings'], forger: 'gateway' },
  { type: 'review.created', queue: SUBSCRIPTIONS['consultation.reviews'], forger: 'catalog' },
  { type: 'wallet.booking_payment.captured', forger: 'consultation' },
];

const eventOf = (type: EventType, source: string): IntegrationEvent =>
  makeEvent(type, SAMPLES[type] as never, { source }) as IntegrationEvent;

/** A service's bus, connected as its own broker user, checking publishers against the others' users. */
async function busOf(service: Service, consumers: ConsumerSpec[] = []): Promise<Bus> {
  const bus = new Bus({ url: users.urlOf(service), log, publisherUsers: users.publisherUsers, minReconnectDelayMs: 100 });
  buses.push(bus);
  await bus.start(60_000);
  for (const consumer of consumers) await bus.consume(consumer);
  return bus;
}

/** The bus `busOf` connected as `service`. */
const busAs = (service: Service) =>
  buses.find((bus) => bus.trust.ownUser === users.users.find((entry) => entry.service === service)!.user)!;

/** Publishes as `service`'s user (its `user-id` set, as kit does) and says whether the broker confirmed it. */
async function publishAs(service: Service, exchange: string, routingKey: string, event: IntegrationEvent): Promise<string> {
  const connection = await amqp.connect(users.urlOf(service));
  try {
    const channel = await connection.createConfirmChannel();
    const userId = users.users.find((entry) => entry.service === service)!.user;
    // A refused publish closes the channel (its confirm callback then fails too: the close says why).
    return await new Promise<string>((resolve) => {
      channel.once('error', (err: Error) => resolve(`refused: ${err.message}`));
      channel.publish(
        exchange,
        routingKey,
        Buffer.from(JSON.stringify(event)),
        { messageId: event.id, userId, persistent: true },
        (err) => {
          if (!err) resolve('confirmed');
        },
      );
    });
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** Recording handlers for a subscription: what each handler was called with. */
function recorder(subscription: Subscription) {
  const handled: IntegrationEvent[] = [];
  /** Events whose first attempt fails (they come back through the retry queue, as the consumer's own copy). */
  const failOnce = new Set<string>();
  const handlers = Object.fromEntries(
    subscription.events.map((type) => [
      type,
      async (event: IntegrationEvent) => {
        if (failOnce.delete(event.id)) throw new Error('the first attempt fails');
        handled.push(event);
      },
    ]),
  );
  return { handled, failOnce, spec: defineConsumer({ subscription, handlers: handlers as never, retryDelaysMs: [200] }) };
}

describe('a RabbitMQ user per service', () => {
  const wallet = recorder(SUBSCRIPTIONS['wallet.bookings']);
  const consultation = recorder(SUBSCRIPTIONS['consultation.reviews']);

  beforeAll(async () => {
    // Every service connects as its own user and declares the whole topology: its permissions suffice.
    await busOf('wallet', [wallet.spec]);
    await busOf('consultation', [consultation.spec]);
    for (const service of ['gateway', 'catalog', 'crm', 'review'] as const) await busOf(service);
  });

  test.each(FORGED)('$type forged by $forger on the events exchange: the broker refuses the publish', async ({ type, forger }) => {
    const outcome = await publishAs(forger, 'marketplace.events', routingKeyOf(type, 1), eventOf(type, EVENT_PRODUCERS[type].producer));
    expect(outcome).toMatch(/^refused: .*ACCESS_REFUSED - access to topic/);
  });

  test.each(FORGED.filter(({ queue }) => queue))(
    '$type forged by $forger straight into its consumer queue: refused and dead-lettered, nothing handled',
    async ({ type, queue, forger }) => {
      const handled = queue!.queue === 'wallet.bookings' ? wallet.handled : consultation.handled;
      const refusedBefore = (await getMetrics().eventsRefused.get()).values.reduce((sum, { value }) => sum + value, 0);
      const forged = eventOf(type, EVENT_PRODUCERS[type].producer);
      // The default exchange reaches any queue by name: a topic permission cannot limit it.
      expect(await publishAs(forger, '', queue!.queue, forged)).toBe('confirmed');
      const deadLetters = await readQueue(broker.url, `${queue!.queue}.dlq`);
      try {
        const kept = await deadLetters.waitFor((message) => message.json?.id === forged.id, `the forged ${type}`);
        expect(String(kept.headers['x-error'])).toContain('must be published by the broker user');
        expect(kept.headers).toMatchObject({ 'x-refused': 'publisher', 'x-original-user-id': busUserOf(users.publisherUsers, forger) });
      } finally {
        await deadLetters.close();
      }
      expect(handled.map((event) => event.id)).not.toContain(forged.id);
      const refused = (await getMetrics().eventsRefused.get()).values.reduce((sum, { value }) => sum + value, 0);
      expect(refused).toBe(refusedBefore + 1);
    },
  );

  test.each(FORGED)('$type from its owner gets through', async ({ type, queue }) => {
    const owner = EVENT_PRODUCERS[type].producer;
    const event = eventOf(type, owner);
    await busAs(owner).publish(event);
    if (!queue) return; // confirmed by the broker (publish resolves only then); nobody consumes it yet
    const handled = queue.queue === 'wallet.bookings' ? wallet.handled : consultation.handled;
    await waitFor(() => handled.find((seen) => seen.id === event.id), { what: `the owner's ${type}`, timeoutMs: 30_000 });
  });

  test("the owner's event whose first attempt failed is taken on its retry (the consumer's own copy)", async () => {
    const event = eventOf('consultation.booking.cancelled', 'consultation');
    wallet.failOnce.add(event.id);
    await busAs('consultation').publish(event);
    await waitFor(() => wallet.handled.find((seen) => seen.id === event.id), { what: 'the retried cancellation', timeoutMs: 30_000 });
    expect(wallet.failOnce.has(event.id)).toBe(false);
  });

  test('an event whose source is not its owner is refused even from a user allowed to publish its key', async () => {
    const forged = eventOf('consultation.session.completed', 'crm');
    expect(await publishAs('consultation', 'marketplace.events', 'consultation.session.completed', forged)).toBe('confirmed');
    const deadLetters = await readQueue(broker.url, 'wallet.bookings.dlq');
    try {
      const kept = await deadLetters.waitFor((message) => message.json?.id === forged.id, 'the event with a wrong source');
      expect(String(kept.headers['x-error'])).toContain('comes only from consultation');
    } finally {
      await deadLetters.close();
    }
    expect(wallet.handled.map((event) => event.id)).not.toContain(forged.id);
  });
});
