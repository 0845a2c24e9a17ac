import type { Channel } from 'amqplib';
import { DEAD_LETTER_EXCHANGE, EVENTS_EXCHANGE } from '@mkt/contracts';

export { DEAD_LETTER_EXCHANGE, EVENTS_EXCHANGE };

/**
 * Exchange and queue names, optionally under a namespace (`BUS_NAMESPACE`): several whole
 * systems can then share one broker without seeing each other's events (the end-to-end tests
 * do; production leaves it empty and keeps the names of DESIGN §6).
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

export async function assertExchanges(channel: Channel, names: BusNames): Promise<void> {
  await channel.assertExchange(names.events, 'topic', { durable: true });
  await channel.assertExchange(names.deadLetter, 'direct', { durable: true });
}

/**
 * One durable queue per concern, bound to its routing keys; a dead-letter queue bound to the
 * DLX under the queue's name; and one delay queue per retry level, whose expired messages go
 * back to the main queue through the default exchange. Fixed TTL per level (no per-message
 * expiry) so a long delay never holds up a short one behind it.
 */
export async function assertConsumerQueues(
  channel: Channel,
  queue: string,
  routingKeys: string[],
  retryDelaysMs: number[],
  bus: BusNames,
): Promise<void> {
  const names = queueNames(queue, retryDelaysMs.length);
  await channel.assertQueue(names.main, {
    durable: true,
    arguments: { 'x-dead-letter-exchange': bus.deadLetter, 'x-dead-letter-routing-key': names.main },
  });
  for (const key of routingKeys) await channel.bindQueue(names.main, bus.events, key);
  await channel.assertQueue(names.deadLetter, { durable: true });
  await channel.bindQueue(names.deadLetter, bus.deadLetter, names.main);
  for (const [index, name] of names.retry.entries()) {
    await channel.assertQueue(name, {
      durable: true,
      arguments: { 'x-message-ttl': retryDelaysMs[index], 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': names.main },
    });
  }
}
