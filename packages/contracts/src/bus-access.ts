import type { Service } from './api';
import { EVENT_PRODUCERS } from './event-producers';
import { DEAD_LETTER_EXCHANGE, EVENTS_EXCHANGE } from './routing';
import { SUBSCRIPTION_LIST } from './subscriptions';

/** Every service that connects to the broker, each with a broker user of its own. */
export const BUS_SERVICES: readonly Service[] = ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'];

/**
 * The owner of each event namespace (the first segment of a type and of its routing keys:
 * `consultation.*`, `wallet.*`, `identity.*`, `review.*`), from the producer table
 * (`EVENT_PRODUCERS`). One namespace has one publisher: a table that gave two services types of
 * one namespace fails here, when the contracts load.
 */
export const EVENT_NAMESPACE_OWNERS: Readonly<Record<string, Service>> = (() => {
  const owners: Record<string, Service> = {};
  for (const [type, { producer }] of Object.entries(EVENT_PRODUCERS)) {
    const namespace = type.split('.')[0]!;
    const known = owners[namespace];
    if (known && known !== producer) throw new Error(`The event namespace ${namespace} has two producers: ${known} and ${producer}`);
    owners[namespace] = producer;
  }
  return Object.freeze(owners);
})();

/**
 * The only service that may publish an event of this type or under this routing key (its
 * namespace's owner); undefined for a namespace no producer owns.
 */
export function eventOwner(typeOrRoutingKey: string): Service | undefined {
  const namespace = typeOrRoutingKey.split('.')[0]!;
  return Object.hasOwn(EVENT_NAMESPACE_OWNERS, namespace) ? EVENT_NAMESPACE_OWNERS[namespace] : undefined;
}

/** The event namespaces a service publishes under (none for a service that publishes nothing). */
export function ownedEventNamespaces(service: Service): string[] {
  return Object.entries(EVENT_NAMESPACE_OWNERS)
    .filter(([, owner]) => owner === service)
    .map(([namespace]) => namespace)
    .sort();
}

/**
 * The broker user of a service, from a deployment's template (`BUS_PUBLISHER_USERS`): `{service}`
 * stands for the service's name (`{service}` in production, `mkt_<run>_{service}` for a run of
 * `npm start` on a shared broker).
 */
export function busUserOf(template: string, service: string): string {
  return template.split('{service}').join(service);
}

/** The regular expressions of one user's RabbitMQ permissions (`rabbitmqctl set_permissions`, `set_topic_permissions`). */
export interface BusPermissions {
  configure: string;
  write: string;
  read: string;
  /** The topic permissions on the events exchange (`exchange`). */
  topic: { exchange: string; write: string; read: string };
}

const escaped = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const anyOf = (names: string[]) => `(?:${names.map(escaped).join('|')})`;

/**
 * What a service's broker user may do on the vhost, the exchanges and queues under `namespace`
 * (BUS_NAMESPACE; empty in production):
 * - configure: the two exchanges and every platform queue with its `.dlq`, `.retry.N` and
 *   `.migrating` queues (every service declares every subscription's queues before it publishes,
 *   so an event published before its consumer first ran is kept);
 * - write: the exchanges, those queues (binding a queue needs write on it) and `amq.default`
 *   (a consumer forwards a failed message to its retry queue through the default exchange);
 * - read: the exchanges (binding needs read on the source) and those queues too (declaring a
 *   queue with a dead-letter exchange needs read on the queue);
 * - topic write on the events exchange: only the routing keys of its own namespaces
 *   (`^(?:consultation)\.` for consultation; `^$` — no event — for a service that publishes none);
 *   topic read: every key (every service binds every subscription's keys).
 *
 * The default exchange reaches every queue by name and is not a topic exchange, so a topic
 * permission cannot limit it: a consumer also checks the message's `user-id` (kit's `Consumer`).
 * Since every service declares every queue, each may also delete or read another's queue: the
 * users keep a service from forging another's events, not from disturbing its queues.
 */
export function busPermissions(service: Service, namespace = ''): BusPermissions {
  const of = (name: string) => (namespace ? `${namespace}.${name}` : name);
  const exchanges = [of(EVENTS_EXCHANGE), of(DEAD_LETTER_EXCHANGE)];
  const queues = SUBSCRIPTION_LIST.map(({ queue }) => of(queue));
  const queuesOf = (names: string[]) => (names.length > 0 ? [`${anyOf(names)}(?:\\..+)?`] : []);
  const whole = (parts: string[]) => `^(?:${parts.join('|')})$`;
  const owned = ownedEventNamespaces(service);
  return {
    configure: whole([anyOf(exchanges), ...queuesOf(queues)]),
    write: whole([anyOf([...exchanges, 'amq.default']), ...queuesOf(queues)]),
    read: whole([anyOf(exchanges), ...queuesOf(queues)]),
    topic: { exchange: of(EVENTS_EXCHANGE), write: owned.length > 0 ? `^${anyOf(owned)}\\.` : '^$', read: '.*' },
  };
}
