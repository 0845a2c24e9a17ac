import type { Channel } from 'amqplib';
import { DEAD_LETTER_EXCHANGE, EVENTS_EXCHANGE } from '@mkt/contracts';

export { DEAD_LETTER_EXCHANGE, EVENTS_EXCHANGE };

/** Names of the queues that serve one consuming concern, e.g. `crm.bookings`. */
export function queueNames(queue: string, retryLevels: number) {
  return {
    main: queue,
    deadLetter: `${queue}.dlq`,
    retry: Array.from({ length: retryLevels }, (_, index) => `${queue}.retry.${index + 1}`),
  };
}

export async function assertExchanges(channel: Channel): Promise<void> {
  await channel.assertExchange(EVENTS_EXCHANGE, 'topic', { durable: true });
  await channel.assertExchange(DEAD_LETTER_EXCHANGE, 'direct', { durable: true });
}

/**
 * One durable queue per concern, bound to its routing keys; a dead-letter queue bound to the
 * DLX under the queue's name; and one delay queue per retry level, whose expired messages go
 * back to the main queue through the default exchange. Fixed TTL per level (no per-message
 * expiry) so a long delay never holds up a short one behind it.
 */
export async function assertConsumerQueues(channel: Channel, queue: string, routingKeys: string[], retryDelaysMs: number[]): Promise<void> {
  const names = queueNames(queue, retryDelaysMs.length);
  await channel.assertQueue(names.main, {
    durable: true,
    arguments: { 'x-dead-letter-exchange': DEAD_LETTER_EXCHANGE, 'x-dead-letter-routing-key': names.main },
  });
  for (const key of routingKeys) await channel.bindQueue(names.main, EVENTS_EXCHANGE, key);
  await channel.assertQueue(names.deadLetter, { durable: true });
  await channel.bindQueue(names.deadLetter, DEAD_LETTER_EXCHANGE, names.main);
  for (const [index, name] of names.retry.entries()) {
    await channel.assertQueue(name, {
      durable: true,
      arguments: { 'x-message-ttl': retryDelaysMs[index], 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': names.main },
    });
  }
}
