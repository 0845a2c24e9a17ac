/**
 * `@mkt/kit/bus`: RabbitMQ — the bus and its consumers, the outbox (a document's `pendingEvents`,
 * published by the relay after the repository's `eventsWritten`), and deletes that record an event
 * (`RecordDeletes`).
 */
export { amqpTlsOptions, Bus } from '../bus/bus';
export { type ConsumerSpec, defineConsumer } from '../bus/consumer';
export { RecordDeletes, type Tombstone, tombstoneModel } from '../bus/deletions';
export { eventsWritten, freeFormArrayField, OutboxRelay, pendingEventsField } from '../bus/outbox';
/** The broker's topology as the consumers declare it, for the operations tools (`migrate-queues`). */
export { assertExchanges, BusNames, consumerQueuePlan, migrateQueue } from '../bus/topology';
export { DEFAULT_RETRY_DELAYS_MS } from '../bus/consumer';
