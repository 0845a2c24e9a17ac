import type { Channel, ChannelModel } from 'amqplib';
import { DEAD_LETTER_EXCHANGE, EVENTS_EXCHANGE, subscriptionRoutingKeys, type Subscription } from '@mkt/contracts/core';

export { DEAD_LETTER_EXCHANGE, EVENTS_EXCHANGE };

/**
 * Exchange and queue names, optionally under a namespace (`BUS_NAMESPACE`): several whole
 * systems can then share one broker without seeing each other's events (the end-to-end tests
 * do; production leaves it empty and keeps the names of ADR 0005).
 */
export class BusNames {
  readonly events: string;
  readonly deadLetter: string;

  constructor(readonly namespace = '') {
    this.events = this.of(EVENTS_EXCHANGE);
    this.deadLetter = this.of(DEAD_LETTER_EXCHANGE);
  }

  of(name: string): string {
    return this.namespace ? `${this.namespace}.${name}` : name;
  }
}

/** Names of the queues that serve one consuming concern, e.g. `crm.bookings`. */
export function queueNames(queue: string, retryLevels: number) {
  return {
    main: queue,
    deadLetter: `${queue}.dlq`,
    retry: Array.from({ length: retryLevels }, (_, index) => `${queue}.retry.${index + 1}`),
  };
}

/**
 * Deliveries of one message by the main queue before the broker itself dead-letters it (to the
 * queue's `.dlq`). The consumer's own retries publish fresh copies, so this only counts
 * redeliveries of the same copy: a handler that crashes the process, a connection lost with the
 * message unacked. RabbitMQ 4 defaults to 20; 3.10 has no default: declared, both behave alike.
 */
export const MAIN_DELIVERY_LIMIT = 20;
/**
 * Dead letters are inspected with get + requeue (`npm run dlq -- list`), and every look counts
 * as a delivery. With 4.x's default of 20 and no dead-letter exchange of its own, the 21st look
 * would drop the message: the dead-letter queue's limit is out of reach instead.
 */
export const DEAD_LETTER_DELIVERY_LIMIT = 1_000_000_000;

export interface QueuePlan {
  name: string;
  /** Declared with `durable: true` and these arguments (always `x-queue-type: quorum`). */
  arguments: Record<string, unknown>;
  bindings: Array<{ exchange: string; routingKey: string }>;
}

/**
 * The queues of one consuming concern, in the order they are declared and migrated (retry and
 * dead-letter queues before the main queue they lead into):
 * - `Q.retry.N`: one delay queue per retry level, never consumed; a message expires after the
 *   level's fixed TTL (no per-message expiry, so a long delay never holds up a short one behind
 *   it) and is dead-lettered back into `Q` through the default exchange, at least once (the
 *   message stays in the delay queue until `Q` has confirmed it; at-least-once needs
 *   `x-overflow: reject-publish`, which no length limit ever triggers here).
 * - `Q.dlq`: bound to the dead-letter exchange under `Q`'s name; no delivery limit in reach.
 * - `Q`: bound to its routing keys; the broker dead-letters a message to `Q.dlq` itself after
 *   `MAIN_DELIVERY_LIMIT` redeliveries (the consumer's own retries and dead-lettering publish
 *   copies, see `Consumer`).
 * Every queue is a durable quorum queue: replicated, and the only replicated type left in 4.x.
 */
export function consumerQueuePlan(queue: string, routingKeys: string[], retryDelaysMs: number[], bus: BusNames): QueuePlan[] {
  const names = queueNames(queue, retryDelaysMs.length);
  const quorum = { 'x-queue-type': 'quorum' };
  const atLeastOnce = { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' };
  return [
    ...names.retry.map((name, index) => ({
      name,
      arguments: {
        ...quorum,
        'x-message-ttl': retryDelaysMs[index],
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': names.main,
        ...atLeastOnce,
      },
      bindings: [],
    })),
    {
      name: names.deadLetter,
      arguments: { ...quorum, 'x-delivery-limit': DEAD_LETTER_DELIVERY_LIMIT },
      bindings: [{ exchange: bus.deadLetter, routingKey: names.main }],
    },
    {
      name: names.main,
      arguments: {
        ...quorum,
        'x-delivery-limit': MAIN_DELIVERY_LIMIT,
        'x-dead-letter-exchange': bus.deadLetter,
        'x-dead-letter-routing-key': names.main,
        ...atLeastOnce,
      },
      bindings: routingKeys.map((routingKey) => ({ exchange: bus.events, routingKey })),
    },
  ];
}

/**
 * What must exist so that no event of a subscription is lost before its consumer first runs:
 * the main queue with its bindings and its dead-letter queue. Their arguments do not depend on
 * the consumer's own settings (its retry delays only shape its retry queues, which the consumer
 * declares itself), so this is exactly what the consumer declares too, and the broker accepts
 * both declarations whoever comes first. The bindings are the routing keys of the versions the
 * subscription reads (`subscriptionRoutingKeys`: for version 1 only, its event types).
 */
export function subscriptionQueuePlan(subscription: Subscription, bus: BusNames): QueuePlan[] {
  return consumerQueuePlan(bus.of(subscription.queue), subscriptionRoutingKeys(subscription), [], bus);
}

/**
 * Declares every subscription's main queue, dead-letter queue and bindings on a channel of its
 * own (a refused declaration closes the channel): every service does this on every connect,
 * before it publishes (docs/rabbitmq-queues.md, "Topology"). A queue declared otherwise (a
 * classic one) → `QueueMigrationNeeded`.
 */
export async function assertSubscriptionQueues(
  connection: ChannelModel,
  subscriptions: readonly Subscription[],
  bus: BusNames,
): Promise<void> {
  const channel = await connection.createChannel();
  channel.on('error', () => undefined); // a refusal is thrown by the declaration itself
  try {
    for (const subscription of subscriptions)
      for (const plan of subscriptionQueuePlan(subscription, bus)) await assertPlannedQueue(channel, plan);
  } finally {
    await channel.close().catch(() => undefined);
  }
}

export async function assertExchanges(channel: Channel, names: BusNames): Promise<void> {
  await channel.assertExchange(names.events, 'topic', { durable: true });
  await channel.assertExchange(names.deadLetter, 'direct', { durable: true });
}

export const MIGRATION_STEP = 'node scripts/migrate-queues.mjs (docs/rabbitmq-queues.md, "Migrating classic queues")';

/**
 * A queue exists with other arguments than this version declares: typically a classic queue
 * from before quorum queues. The broker refuses the declaration (406 PRECONDITION_FAILED); only
 * the documented migration moves it, messages included.
 */
export class QueueMigrationNeeded extends Error {
  constructor(
    readonly queue: string,
    readonly detail: string,
  ) {
    super(`Queue ${queue} exists with other arguments than this version declares (${detail}); run ${MIGRATION_STEP}`);
  }
}

function isPreconditionFailed(err: unknown): err is Error & { code: number } {
  return (err as { code?: unknown })?.code === 406;
}

/** Declares one planned queue and its bindings; a queue declared otherwise → `QueueMigrationNeeded`. */
export async function assertPlannedQueue(channel: Channel, plan: QueuePlan): Promise<void> {
  try {
    await channel.assertQueue(plan.name, { durable: true, arguments: plan.arguments });
  } catch (err) {
    if (isPreconditionFailed(err)) throw new QueueMigrationNeeded(plan.name, err.message.replace(/^.*PRECONDITION_FAILED - /s, ''));
    throw err;
  }
  for (const { exchange, routingKey } of plan.bindings) await channel.bindQueue(plan.name, exchange, routingKey);
}

/** Every queue of one consuming concern (`consumerQueuePlan`), declared and bound. */
export async function assertConsumerQueues(
  channel: Channel,
  queue: string,
  routingKeys: string[],
  retryDelaysMs: number[],
  bus: BusNames,
): Promise<void> {
  for (const plan of consumerQueuePlan(queue, routingKeys, retryDelaysMs, bus)) await assertPlannedQueue(channel, plan);
}

export interface MigrationResult {
  queue: string;
  outcome: 'already-current' | 'migrated' | 'resumed';
  moved: number;
}

export interface MigrationOptions {
  /** Called after each step (tests publish in between to show nothing published meanwhile is lost). */
  onStep?: (step: 'temporary-bound' | 'moved-out' | 'deleted' | 'declared' | 'moved-back') => Promise<void>;
  /** How long to wait for the old version's consumers to leave the queue before giving up. */
  consumersGoneTimeoutMs?: number;
}

/** The queue that holds a queue's messages while it is declared anew. */
export function temporaryQueueName(queue: string): string {
  return `${queue}.migrating`;
}

/**
 * Moves one queue to its planned arguments (classic → quorum) without losing a message, over
 * AMQP only, idempotent and safe to re-run after an interruption:
 * 1. declaring it as planned succeeds → nothing to do (or, when a temporary queue is left from
 *    an interrupted run, go on from step 5);
 * 2. a temporary quorum queue `Q.migrating` is declared with `Q`'s bindings, so events published
 *    from now on land there too;
 * 3. once `Q` has no consumers (an old version's consumer would lose its unacked messages with
 *    `Q`), `Q` is unbound and its messages are moved into the temporary queue (each copy
 *    confirmed before the original is acked);
 * 4. `Q` is deleted (only if empty and unused) and declared as planned with its bindings;
 * 5. the temporary queue's messages are moved back into `Q`, and it is deleted when empty.
 * An event published between 2 and 4 may arrive twice: consumers are idempotent.
 */
export async function migrateQueue(connection: ChannelModel, plan: QueuePlan, options: MigrationOptions = {}): Promise<MigrationResult> {
  const temporary = temporaryQueueName(plan.name);
  const step = options.onStep ?? (() => Promise.resolve());
  const leftOver = await queueExists(connection, temporary);
  const probe = await connection.createChannel();
  probe.on('error', () => undefined);
  let current = true;
  try {
    await assertPlannedQueue(probe, plan);
  } catch (err) {
    if (!(err instanceof QueueMigrationNeeded)) throw err;
    current = false;
  }
  await probe.close().catch(() => undefined);
  if (current && !leftOver) return { queue: plan.name, outcome: 'already-current', moved: 0 };

  const channel = await connection.createConfirmChannel();
  try {
    let moved = 0;
    if (!current) {
      await channel.assertQueue(temporary, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
      for (const { exchange, routingKey } of plan.bindings) await channel.bindQueue(temporary, exchange, routingKey);
      await step('temporary-bound');
      await waitWithoutConsumers(channel, plan.name, options.consumersGoneTimeoutMs ?? 0);
      // New events now reach the temporary queue only, so `Q` can be emptied for good.
      for (const { exchange, routingKey } of plan.bindings) await channel.unbindQueue(plan.name, exchange, routingKey);
      moved += await moveMessages(connection, plan.name, temporary);
      await step('moved-out');
      await channel.deleteQueue(plan.name, { ifEmpty: true, ifUnused: true });
      await step('deleted');
      await assertPlannedQueue(channel, plan);
      await step('declared');
    }
    moved += await moveMessages(connection, temporary, plan.name);
    await step('moved-back');
    // Unbound first, so nothing new arrives between the last move and the delete.
    for (const { exchange, routingKey } of plan.bindings) await channel.unbindQueue(temporary, exchange, routingKey);
    moved += await moveMessages(connection, temporary, plan.name);
    // Quorum queues refuse `ifEmpty`; nothing reaches the unbound queue any more, and it was emptied.
    const { messageCount } = await channel.checkQueue(temporary);
    if (messageCount > 0) throw new Error(`${temporary} still holds ${messageCount} message(s); run the migration again`);
    await channel.deleteQueue(temporary);
    return { queue: plan.name, outcome: current ? 'resumed' : 'migrated', moved };
  } finally {
    await channel.close().catch(() => undefined);
  }
}

async function queueExists(connection: ChannelModel, queue: string): Promise<boolean> {
  const channel = await connection.createChannel();
  channel.on('error', () => undefined);
  try {
    await channel.checkQueue(queue);
    await channel.close();
    return true;
  } catch {
    return false;
  }
}

async function waitWithoutConsumers(channel: Channel, queue: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { consumerCount } = await channel.checkQueue(queue);
    if (consumerCount === 0) return;
    if (Date.now() >= deadline)
      throw new Error(
        `Queue ${queue} still has ${consumerCount} consumer(s): the previous version still consumes it. ` +
          'Finish the rollout first (this version does not consume a queue it cannot declare), then run the migration again.',
      );
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * Moves every message from one queue to another through the default exchange, each copy
 * confirmed before its original is acked. A channel of its own each time: on RabbitMQ 3.10.8 one
 * channel that had read the classic queue (deleted since) and then read the quorum one lost its
 * connection (541 INTERNAL_ERROR).
 */
async function moveMessages(connection: ChannelModel, from: string, to: string): Promise<number> {
  const channel = await connection.createConfirmChannel();
  try {
    let moved = 0;
    for (;;) {
      const msg = await channel.get(from, { noAck: false });
      if (!msg) return moved;
      const headers = { ...msg.properties.headers };
      delete headers['x-delivery-count'];
      channel.sendToQueue(to, msg.content, { ...msg.properties, headers, persistent: true });
      await channel.waitForConfirms();
      channel.ack(msg);
      moved += 1;
    }
  } finally {
    await channel.close().catch(() => undefined);
  }
}
