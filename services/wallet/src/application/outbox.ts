/**
 * Publishes the events a write has just put on a record's outbox (kit's OutboxRelay, per
 * source). A failure leaves them to the relay's sweep; the caller never waits on the broker.
 */
export interface EventsOut {
  flush(source: OutboxSourceName, id: string): void;
}

export type OutboxSourceName = 'topups' | 'payouts' | 'booking-holds';
