// The events exchanges and routing keys, without a schema (no zod): what the broker's users, the
// test harness and anything that must not load the schemas use (`@mkt/contracts/bus-access`).

export const EVENTS_EXCHANGE = 'marketplace.events';
export const DEAD_LETTER_EXCHANGE = 'marketplace.dlx';

/**
 * The routing key of one version of a type on the events exchange: version 1 keeps the bare
 * type (every released consumer's binding), version N ≥ 2 is `<type>.v<N>`, so a consumer that
 * reads only older versions never receives a shape it cannot read.
 */
export function routingKeyOf(type: string, version: number): string {
  return version === 1 ? type : `${type}.v${version}`;
}
