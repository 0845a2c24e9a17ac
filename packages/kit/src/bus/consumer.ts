import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import {
  EVENT_CONTRACTS,
  eventDataSchema,
  EventEnvelope,
  routingKeyOf,
  subscriptionRoutingKeys,
  versionsRead,
  type EventRegistry,
  type EventType,
  type IntegrationEvent,
  type Subscription,
} from '@mkt/contracts/core';
import type { Logger } from '../logger';
import { getMetrics, observeWithTrace } from '../metrics';
import { consumeSpan, markActiveSpanFailed } from '../tracing';
import type { Bus } from './bus';
import { refusalOf, type RefusalReason } from './publishers';
import { assertConsumerQueues, queueNames } from './topology';

type Handler<T extends EventType> = (event: IntegrationEvent<T>, context: { log: Logger }) => Promise<void>;
export type EventHandlers = { [T in EventType]?: Handler<T> };

export interface ConsumerSpec {
  /**
   * The queue (`<service>.<concern>`, e.g. `crm.bookings`) and its routing keys: an entry of
   * `SUBSCRIPTIONS` (@mkt/contracts), which every service declares on connect.
   */
  subscription: Subscription;
  /** One handler per event type of the subscription, no more and no fewer. */
  handlers: EventHandlers;
  /** Delay before each retry; its length is the number of retries before dead-lettering. */
  retryDelaysMs?: number[];
  prefetch?: number;
  /** The event contracts data is read with: the platform's (`EVENT_CONTRACTS`) unless a test brings its own. */
  contracts?: EventRegistry;
}

/**
 * A consumer of one subscription, its handlers checked against the subscription's event types
 * at compile time (one for each, no other).
 */
export function defineConsumer<T extends EventType>(
  spec: Omit<ConsumerSpec, 'subscription' | 'handlers'> & {
    subscription: Subscription<T>;
    handlers: NoInfer<{ [K in T]: Handler<K> }>;
  },
): ConsumerSpec {
  return spec as ConsumerSpec;
}

/**
 * The handlers must be exactly the subscription's event types (a binding without a handler
 * dead-letters), and every version it reads must have a contract.
 */
function checkHandlers(spec: ConsumerSpec): void {
  const bound = [...spec.subscription.events].sort();
  const handled = Object.keys(spec.handlers).sort();
  if (bound.join() !== handled.join())
    throw new Error(
      `Consumer of ${spec.subscription.queue}: handlers [${handled.join(', ')}] differ from its subscription [${bound.join(', ')}]`,
    );
  for (const type of spec.subscription.events)
    for (const version of versionsRead(spec.subscription, type))
      if (!eventDataSchema(type, version, spec.contracts ?? EVENT_CONTRACTS))
        throw new Error(`Consumer of ${spec.subscription.queue}: no contract for ${type}@${version}`);
}

const ATTEMPT_HEADER = 'x-attempt';
export const DEFAULT_RETRY_DELAYS_MS = [1_000, 5_000, 30_000];

class PoisonMessage extends Error {}

/**
 * A well-formed event from a publisher that does not own it (`refusalOf`): dead-lettered with the
 * reason, counted (`marketplace_events_refused_total`), never handled nor retried.
 */
class RefusedPublisher extends PoisonMessage {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
  }
}

/** A well-formed event of a version this consumer does not read: acked and counted, not handled. */
class UnreadVersion extends Error {}

/**
 * Runs handlers for one queue: the envelope and data are checked against contracts (a bad
 * message goes straight to the dead-letter queue), the publisher against the event's owner (an
 * event from another service is refused, `refusalOf`, and dead-lettered), a message is acked only after its handler
 * succeeded, a failure is retried after a delay a bounded number of times, then dead-lettered.
 * Handlers must be idempotent: delivery is at least once.
 */
export class Consumer {
  private channel: Channel | null = null;
  private consumerTag: string | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly retryDelays: number[];
  private stopped = false;

  constructor(
    private readonly spec: ConsumerSpec,
    private readonly bus: Bus,
    private readonly log: Logger,
  ) {
    checkHandlers(spec);
    this.retryDelays = spec.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  }

  get queue(): string {
    return this.bus.names.of(this.spec.subscription.queue);
  }

  async start(connection: ChannelModel): Promise<void> {
    if (this.stopped) return;
    const channel = await connection.createChannel();
    channel.on('error', (err: Error) => this.log.warn({ err, queue: this.queue }, 'consumer channel error'));
    await assertConsumerQueues(channel, this.queue, subscriptionRoutingKeys(this.spec.subscription), this.retryDelays, this.bus.names);
    await channel.prefetch(this.spec.prefetch ?? 10);
    const { consumerTag } = await channel.consume(this.queue, (msg) => {
      if (!msg) return; // cancelled by the broker; the next reconnect starts again
      // A consumer span, the child of the publish that the message's `traceparent` header names.
      const info = {
        destination: this.queue,
        routingKey: msg.fields.routingKey,
        messageId: msg.properties.messageId,
        correlationId: msg.properties.correlationId,
      };
      const work = consumeSpan(info, msg.properties.headers, () => this.handle(channel, msg)).finally(() => this.inFlight.delete(work));
      this.inFlight.add(work);
    });
    this.channel = channel;
    this.consumerTag = consumerTag;
  }

  /** Stops taking messages and waits for those being handled. */
  async stop(): Promise<void> {
    this.stopped = true;
    const channel = this.channel;
    if (channel && this.consumerTag) await channel.cancel(this.consumerTag).catch(() => undefined);
    await Promise.allSettled([...this.inFlight]);
    await channel?.close().catch(() => undefined);
    this.channel = null;
  }

  private async handle(channel: Channel, msg: ConsumeMessage): Promise<void> {
    const metrics = getMetrics().eventsConsumed;
    const started = performance.now();
    const handled = (outcome: string) =>
      observeWithTrace(getMetrics().eventHandlingDuration, { queue: this.queue, outcome }, (performance.now() - started) / 1000);
    const attempt = Number(msg.properties.headers?.[ATTEMPT_HEADER] ?? 0);
    let type = msg.fields.routingKey;
    let log = this.log.child({ queue: this.queue, messageId: msg.properties.messageId, attempt });
    try {
      const { event, handler } = this.parse(msg);
      type = event.type;
      log = log.child({ eventId: event.id, type: event.type, correlationId: event.correlationId });
      await handler(event, { log });
      ackQuietly(channel, msg);
      metrics.inc({ queue: this.queue, type, outcome: 'acked' });
      handled('acked');
      const lag = (Date.now() - Date.parse(event.occurredAt)) / 1000;
      if (Number.isFinite(lag)) observeWithTrace(getMetrics().eventLag, { queue: this.queue }, Math.max(0, lag));
    } catch (err) {
      if (err instanceof UnreadVersion) {
        // Another version of an event this queue reads, delivered under that version's own key
        // (the queue is still bound to it, e.g. after a rollback): its producer publishes every
        // version some consumer still reads, so this one's copy is in the queue too.
        log.info({ reason: err.message }, 'event of a version this consumer does not read: skipped');
        ackQuietly(channel, msg);
        metrics.inc({ queue: this.queue, type, outcome: 'skipped_version' });
        handled('skipped_version');
        return;
      }
      markActiveSpanFailed(err);
      if (err instanceof RefusedPublisher) {
        log.error(
          { reason: err.reason, refusal: err.message, userId: msg.properties.userId },
          'event refused: its publisher does not own it',
        );
        await this.deadLetter(channel, msg, err.message, { 'x-refused': err.reason });
        getMetrics().eventsRefused.inc({ queue: this.queue, type, reason: err.reason });
        metrics.inc({ queue: this.queue, type, outcome: 'refused' });
        handled('refused');
        return;
      }
      if (err instanceof PoisonMessage || attempt >= this.retryDelays.length) {
        log.error({ err }, 'message dead-lettered');
        await this.deadLetter(channel, msg, (err as Error).message);
        metrics.inc({ queue: this.queue, type, outcome: 'dead_lettered' });
        handled('dead_lettered');
      } else {
        log.warn({ err, retryInMs: this.retryDelays[attempt] }, 'handler failed; will retry');
        await this.retry(channel, msg, attempt + 1);
        metrics.inc({ queue: this.queue, type, outcome: 'retried' });
        handled('retried');
      }
    }
  }

  private parse(msg: ConsumeMessage): { event: IntegrationEvent; handler: Handler<EventType> } {
    let raw: unknown;
    try {
      raw = JSON.parse(msg.content.toString('utf8'));
    } catch {
      throw new PoisonMessage('The message is not JSON');
    }
    const envelope = EventEnvelope.safeParse(raw);
    if (!envelope.success) throw new PoisonMessage(`Bad envelope: ${envelope.error.message}`);
    const { type: name, version } = envelope.data;
    const type = name as EventType;
    const refusal = refusalOf(
      envelope.data,
      { exchange: msg.fields.exchange, routingKey: msg.fields.routingKey, userId: msg.properties.userId as string | undefined },
      this.bus.trust,
      this.bus.names.events,
    );
    if (refusal) throw new RefusedPublisher(refusal.reason, refusal.message);
    const handler = Object.hasOwn(this.spec.handlers, type) ? (this.spec.handlers[type] as Handler<EventType>) : undefined;
    if (!handler) throw new PoisonMessage(`No handler for ${name} on ${this.queue}`);
    if (!versionsRead(this.spec.subscription, type).includes(version)) {
      // Skipped only when it came under its own version's key; any other key (a version 2 body
      // under the version 1 key: a producer's bug, a relay of a release that routes by type only,
      // a forged message) is kept in the dead-letter queue for a person to look at.
      const deliveredAs = String(msg.properties.headers?.['x-original-routing-key'] ?? msg.fields.routingKey);
      if (deliveredAs !== routingKeyOf(type, version))
        throw new PoisonMessage(`${type}@${version} arrived under ${deliveredAs}, not its own key ${routingKeyOf(type, version)}`);
      throw new UnreadVersion(`${type}@${version} is not read on ${this.queue}`);
    }
    const schema = eventDataSchema(type, version, this.spec.contracts ?? EVENT_CONTRACTS);
    if (!schema) throw new PoisonMessage(`No contract for ${type}@${version}`);
    const data = schema.safeParse(envelope.data.data);
    if (!data.success) throw new PoisonMessage(`Bad data of ${type}@${version}: ${data.error.message}`);
    return { event: { ...envelope.data, type, data: data.data } as IntegrationEvent, handler };
  }

  /** Sends a copy to the retry level's delay queue (confirmed), then acks the original. */
  private async retry(channel: Channel, msg: ConsumeMessage, attempt: number): Promise<void> {
    const retryQueue = queueNames(this.queue, this.retryDelays.length).retry[attempt - 1]!;
    await this.forward(channel, msg, '', retryQueue, { [ATTEMPT_HEADER]: attempt });
  }

  /** `marks`: more headers (`x-refused` on an event from a publisher that does not own it: never replayed). */
  private async deadLetter(channel: Channel, msg: ConsumeMessage, reason: string, marks: Record<string, string> = {}): Promise<void> {
    getMetrics().deadLettered.inc({ queue: this.queue });
    await this.forward(channel, msg, this.bus.names.deadLetter, this.queue, {
      'x-error': reason.slice(0, 1000),
      ...(msg.properties.userId ? { 'x-original-user-id': String(msg.properties.userId) } : {}),
      ...marks,
    });
  }

  /**
   * Publishes a copy with confirm and acks the original only then. When the broker is gone the
   * original stays unacked and comes back on reconnect: nothing is dropped.
   */
  private async forward(
    channel: Channel,
    msg: ConsumeMessage,
    exchange: string,
    routingKey: string,
    headers: Record<string, unknown>,
  ): Promise<void> {
    try {
      const { messageId, correlationId, type, contentType } = msg.properties;
      // A quorum queue's count of this copy's deliveries; the copy starts its own.
      const { 'x-delivery-count': _deliveries, ...kept } = (msg.properties.headers ?? {}) as Record<string, unknown>;
      await this.bus.publishRaw(exchange, routingKey, msg.content, {
        messageId,
        correlationId,
        type,
        contentType,
        headers: { 'x-original-routing-key': msg.fields.routingKey, ...kept, ...headers },
      });
      ackQuietly(channel, msg);
    } catch (err) {
      this.log.warn({ err, queue: this.queue }, 'could not forward message; it will be redelivered');
      try {
        channel.nack(msg, false, true);
      } catch {
        // The channel is gone with the connection; the broker redelivers the message.
      }
    }
  }
}

/** An ack on a channel that died with its connection fails; the broker redelivers then. */
function ackQuietly(channel: Channel, msg: ConsumeMessage): void {
  try {
    channel.ack(msg);
  } catch {
    // Redelivered after reconnect; handlers are idempotent.
  }
}
