import { busUserOf, eventOwner } from '@mkt/contracts/core';

/**
 * Who a consumer believes published a message. `ownUser`: the broker user this process connects
 * as (its own retry copies carry it). `publisherUsers`: the template of every service's broker
 * user (`BUS_PUBLISHER_USERS`, `{service}` standing for the name); unset, the AMQP `user-id` is
 * not checked (one broker user for every service: only the `source` rule holds).
 */
export interface PublisherTrust {
  ownUser: string;
  publisherUsers?: string;
}

/** How a message reached the consumer (the AMQP delivery and its properties). */
export interface Delivery {
  /** The exchange it was delivered from: the events exchange, or '' for a retry copy. */
  exchange: string;
  routingKey: string;
  /** The AMQP `user-id` property, which the broker checks against the publisher's connection. */
  userId?: string;
}

export type RefusalReason = 'unowned' | 'source' | 'routing_key' | 'publisher';

export interface Refusal {
  reason: RefusalReason;
  message: string;
}

/**
 * The rule every consumer keeps before a handler runs: an event is taken only from the service
 * that owns its namespace in the producer table (`eventOwner`: `consultation.*` from
 * consultation, `wallet.*` from wallet, `identity.*` from the gateway, `review.*` from review):
 * - its `source` is that owner;
 * - delivered through the events exchange, its routing key is in that owner's namespace too;
 * - with `publisherUsers` set, its `user-id` (which the broker refuses to let a connection set
 *   to another user than its own) is the owner's broker user, or this consumer's own user on a
 *   copy it forwarded itself (a retry, through the default exchange).
 * Returns why the event is refused, or null when it is taken.
 */
export function refusalOf(
  event: { type: string; source: string },
  delivery: Delivery,
  trust: PublisherTrust,
  eventsExchange: string,
): Refusal | null {
  const owner = eventOwner(event.type);
  if (!owner) return { reason: 'unowned', message: `No service publishes ${event.type}` };
  if (event.source !== owner)
    return { reason: 'source', message: `${event.type} comes only from ${owner}, not from the source ${event.source}` };
  const fromExchange = delivery.exchange === eventsExchange;
  if (fromExchange && eventOwner(delivery.routingKey) !== owner)
    return { reason: 'routing_key', message: `${event.type} arrived under ${delivery.routingKey}, outside ${owner}'s events` };
  if (trust.publisherUsers === undefined) return null;
  const expected = busUserOf(trust.publisherUsers, owner);
  if (delivery.userId === expected) return null;
  if (!fromExchange && delivery.userId === trust.ownUser) return null;
  return {
    reason: 'publisher',
    message: `${event.type} must be published by the broker user ${expected}, not ${delivery.userId ?? '(no user-id)'}`,
  };
}

/** The user an AMQP URL connects as (amqplib's default is guest). */
export function amqpUser(url: string): string {
  try {
    const user = decodeURIComponent(new URL(url).username);
    return user || 'guest';
  } catch {
    return 'guest';
  }
}
