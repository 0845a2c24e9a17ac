import type { EventType } from './events';
import { routingKeyOf } from './routing';

/**
 * One consuming queue of the platform: its name (`<service>.<concern>`, before `BUS_NAMESPACE`)
 * and the event types bound to it (its routing keys on the events exchange).
 */
export interface Subscription<T extends EventType = EventType> {
  readonly queue: string;
  readonly events: readonly T[];
  /**
   * The versions the consumer reads, per event type (absent: version 1 only). The queue is bound
   * to each version's routing key (`routingKeyOf`: the type for version 1, `<type>.v<N>` after);
   * a consumer moving to version 2 lists `[1, 2]` while producers still publish both, then `[2]`.
   */
  readonly versions?: Readonly<Partial<Record<T, readonly number[]>>>;
}

/** The versions of `type` a subscription reads (version 1 unless it says otherwise). */
export function versionsRead<T extends EventType>(subscription: Subscription<T>, type: T): readonly number[] {
  return subscription.versions?.[type] ?? [1];
}

/**
 * A subscription's routing keys on the events exchange, in the order of its event types: for a
 * subscription that reads only version 1, exactly its event types (the bindings every released
 * version declares).
 */
export function subscriptionRoutingKeys(subscription: Subscription): string[] {
  return subscription.events.flatMap((type) => versionsRead(subscription, type).map((version) => routingKeyOf(type, version)));
}

/**
 * Every consuming queue and what it receives: the one source of the consumers' queue names and
 * bindings. An entry reads version 1 of each type; one that reads other versions becomes
 * `{ queue, events, versions }` in `SUBSCRIPTIONS` (see `Subscription.versions`). Every service declares all of them (main queue, dead-letter queue, bindings) when it
 * connects to the broker, before it publishes: an event published before its consumer ever ran
 * waits in the consumer's queue instead of being dropped as unroutable
 * (docs/rabbitmq-queues.md, "Topology").
 */
const TABLE = {
  'consultation.payments': ['wallet.booking_refund.completed'],
  'consultation.reviews': ['review.created', 'review.visibility_changed'],
  'crm.users': ['identity.user.registered'],
  'crm.bookings': [
    'consultation.booking.confirmed',
    'consultation.booking.cancelled',
    'wallet.booking_refund.completed',
    'consultation.session.completed',
    'consultation.session.no_show',
  ],
  'review.sessions': ['consultation.session.completed', 'consultation.session.no_show'],
  'review.payments': ['wallet.booking_payment.captured'],
  'review.users': ['identity.user.registered'],
  'wallet.bookings': [
    'consultation.session.completed',
    'consultation.session.no_show',
    'consultation.booking.cancelled',
    'consultation.booking.disputed',
  ],
  'wallet.users': ['identity.user.registered'],
  'gateway.audit': [
    'wallet.admin_action.recorded',
    'consultation.admin_action.recorded',
    'review.admin_action.recorded',
    'catalog.admin_action.recorded',
    'crm.admin_action.recorded',
  ],
} as const satisfies Record<
  string,
  readonly EventType[] | { events: readonly EventType[]; versions: Partial<Record<EventType, readonly number[]>> }
>;

export type SubscriptionQueue = keyof typeof TABLE;

type EventsOf<E> = E extends readonly EventType[] ? E[number] : E extends { events: readonly (infer X extends EventType)[] } ? X : never;

export const SUBSCRIPTIONS = Object.fromEntries(
  Object.entries(TABLE).map(([queue, entry]: [string, unknown]) => [
    queue,
    Array.isArray(entry) ? { queue, events: entry } : { queue, ...(entry as object) },
  ]),
) as unknown as {
  readonly [Q in SubscriptionQueue]: Subscription<EventsOf<(typeof TABLE)[Q]>> & { readonly queue: Q };
};

/** `SUBSCRIPTIONS` as a list, in the table's order. */
export const SUBSCRIPTION_LIST: readonly Subscription[] = Object.values(SUBSCRIPTIONS);
