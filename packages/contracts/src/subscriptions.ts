import type { EventType } from './events';

/**
 * One consuming queue of the platform: its name (`<service>.<concern>`, before `BUS_NAMESPACE`)
 * and the event types bound to it (its routing keys on the events exchange).
 */
export interface Subscription<T extends EventType = EventType> {
  readonly queue: string;
  readonly events: readonly T[];
}

/**
 * Every consuming queue and what it receives: the one source of the consumers' queue names and
 * bindings. Every service declares all of them (main queue, dead-letter queue, bindings) when it
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
  'review.sessions': ['consultation.session.completed'],
  'review.users': ['identity.user.registered'],
  'wallet.bookings': ['consultation.session.completed', 'consultation.session.no_show', 'consultation.booking.cancelled'],
  'wallet.users': ['identity.user.registered'],
} as const satisfies Record<string, readonly EventType[]>;

export type SubscriptionQueue = keyof typeof TABLE;

export const SUBSCRIPTIONS = Object.fromEntries(Object.entries(TABLE).map(([queue, events]) => [queue, { queue, events }])) as unknown as {
  readonly [Q in SubscriptionQueue]: Subscription<(typeof TABLE)[Q][number]> & { readonly queue: Q };
};

/** `SUBSCRIPTIONS` as a list, in the table's order. */
export const SUBSCRIPTION_LIST: readonly Subscription[] = Object.values(SUBSCRIPTIONS);
