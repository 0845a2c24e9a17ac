/**
 * `@mkt/contracts/bus-access`: the broker's side of the contracts without a schema (no zod) — the
 * exchanges, routing keys, subscriptions, who publishes what and each service's broker permissions —
 * for what provisions or inspects the broker (packages/infra, `npm start`'s runner) and must not
 * load every schema of every service.
 */
export type { Service } from '../api';
export * from '../bus-access';
export { DEAD_LETTER_EXCHANGE, EVENTS_EXCHANGE, routingKeyOf } from '../routing';
export { EVENT_PRODUCERS } from '../event-producers';
export * from '../subscriptions';
