import { z } from 'zod';
import { DEAD_LETTER_EXCHANGE, EVENTS_EXCHANGE, EventEnvelope, eventContractList, routingKeyOf, type EventType } from './events';
import { contractsVersion } from './version';
import { EVENT_PRODUCERS } from './event-producers';
import { SUBSCRIPTION_LIST, subscriptionRoutingKeys, type Subscription } from './subscriptions';

export { EVENT_PRODUCERS };

/**
 * The AsyncAPI 3.0 document of the event bus, generated from the same contracts that make and
 * check the events: the envelope (`EventEnvelope`), each `type@version`'s `data` (`EVENT_CONTRACTS`,
 * through zod's own `z.toJSONSchema`), the consuming queues (`SUBSCRIPTIONS`) and the exchange
 * names. Served by the gateway as `/asyncapi.json` beside `/openapi.json` (docs/asyncapi.md).
 *
 * Stable names (a reader may link to them): the server `rabbitmq`; a channel per routing key on
 * `marketplace.events`, named after the routing key; a channel per consuming queue,
 * `queue.<queue>`; a message per `type@version`, `<type>.v<version>` in `components.messages`
 * (its `name` is `<type>@<version>`) with its `data` schema `<type>.v<version>.data` in
 * `components.schemas`; the operations `<service>.send.<routingKey>` and `<queue>.receive`.
 */

type JsonSchema = Record<string, unknown>;

/** One published `type@version`: the schema of its `data` and the routing key it travels under. */
export interface EventVersionContract {
  type: EventType;
  version: number;
  data: z.ZodType;
}

/** Every `type@version` the registry holds (`EVENT_CONTRACTS`): what the producers publish. */
export function publishedEventVersions(): EventVersionContract[] {
  return eventContractList().map(({ type, version, schema }) => ({ type: type as EventType, version, data: schema }));
}

/** The retries and dead letters of every consuming queue (kit's `Consumer` and `consumerQueuePlan`). */
export const CONSUMER_RETRY_POLICY = {
  /** Delay before each retry (kit's `DEFAULT_RETRY_DELAYS_MS`); its length is the number of retries. */
  retryDelaysMs: [1_000, 5_000, 30_000],
  /** Redeliveries of one copy before the broker itself dead-letters it (kit's `MAIN_DELIVERY_LIMIT`). */
  deliveryLimit: 20,
} as const;

const BINDING_VERSION = '0.3.0';
const SCHEMA_REF = '#/components/schemas/';
const W3C_TRACEPARENT = '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$';

/** A zod schema as the JSON Schema a reader of the wire checks: draft-07 (AsyncAPI's schema format), as input, so unknown fields are not refused. */
function jsonSchemaOf(schema: z.ZodType, name: string): JsonSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { target: 'draft-7', io: 'input', unrepresentable: 'throw' }) as JsonSchema;
  if ('$defs' in json || 'definitions' in json)
    throw new Error(`${name}: its JSON Schema has definitions of its own; name them as components first`);
  return json;
}

const messageKey = (event: Pick<EventVersionContract, 'type' | 'version'>) => `${event.type}.v${event.version}`;
const dataSchemaKey = (event: Pick<EventVersionContract, 'type' | 'version'>) => `${messageKey(event)}.data`;
const queueChannelKey = (queue: string) => `queue.${queue}`;

/** The envelope of one `type@version`: `type` and `version` fixed, `data` its named schema. */
function payloadOf(event: EventVersionContract): JsonSchema {
  const envelope = jsonSchemaOf(EventEnvelope, 'EventEnvelope');
  const properties = envelope.properties as Record<string, JsonSchema>;
  return {
    ...envelope,
    properties: {
      id: { ...properties.id, description: 'The event’s id (a UUID), also the AMQP `messageId`: consumers drop a repeat by it.' },
      type: { ...properties.type, const: event.type, description: 'The event type; also the AMQP `type` property.' },
      version: { ...properties.version, const: event.version, description: 'The version of `data`’s shape.' },
      occurredAt: { ...properties.occurredAt, description: 'When the change happened (ISO 8601 with offset).' },
      source: { ...properties.source, description: 'The producing service.', examples: [EVENT_PRODUCERS[event.type].producer] },
      correlationId: {
        ...properties.correlationId,
        description:
          'The request that caused the event (the gateway’s `x-request-id`), kept along a saga; also the AMQP `correlationId` property.',
      },
      data: { $ref: `${SCHEMA_REF}${dataSchemaKey(event)}` },
    },
  };
}

/** The AMQP headers a consumer may find on a message (none is always there). */
function headersSchema(): JsonSchema {
  return {
    type: 'object',
    description:
      'AMQP headers. The publisher sets the W3C trace context of its publish span; a copy that was retried or dead-lettered carries what the consumer added, and the broker its own (`x-death`, `x-delivery-count`).',
    properties: {
      traceparent: {
        type: 'string',
        pattern: W3C_TRACEPARENT,
        description:
          'W3C trace context of the publish span (a child of the request that made the event, also when the outbox sweeper publishes it later); the consumer’s span is its child.',
      },
      tracestate: { type: 'string', description: 'W3C trace state, when the trace has one.' },
      'x-attempt': {
        type: 'integer',
        minimum: 1,
        maximum: CONSUMER_RETRY_POLICY.retryDelaysMs.length,
        description: 'On a retried copy: which retry it is (set by the consumer whose handler failed).',
      },
      'x-original-routing-key': {
        type: 'string',
        description: 'On a retried or dead-lettered copy: the routing key it was published with.',
      },
      'x-error': { type: 'string', maxLength: 1000, description: 'On a dead-lettered copy (in `<queue>.dlq`): why it was dead-lettered.' },
    },
  };
}

const deliveryDescription = (subscription: Subscription, routingKeys: readonly string[]) => {
  const { retryDelaysMs, deliveryLimit } = CONSUMER_RETRY_POLICY;
  const delays = retryDelaysMs.map((ms) => `${ms / 1000} s`).join(', ');
  const q = subscription.queue;
  return [
    `Consumes the durable quorum queue \`${q}\`, bound to \`${EVENTS_EXCHANGE}\` under ${routingKeys.map((key) => `\`${key}\``).join(', ')}.`,
    'A message is acked only after its handler succeeded; delivery is at least once, so handlers are idempotent (by the event `id`).',
    `A handler that throws: a copy with \`x-attempt: n\` goes to \`${q}.retry.n\` and comes back after its delay (${delays}).`,
    `After the last retry, or at once for a message that cannot be read (not JSON, a bad envelope or \`data\`), the copy goes with \`x-error\` through \`${DEAD_LETTER_EXCHANGE}\` to \`${q}.dlq\`;`,
    `the broker dead-letters a copy there itself after ${deliveryLimit} redeliveries (a handler that crashes the process). See docs/rabbitmq-queues.md.`,
  ].join(' ');
};

export interface AsyncApiOptions {
  /** The `type@version`s to describe; by default every one published today (`publishedEventVersions`). */
  events?: readonly EventVersionContract[];
  /** The consuming queues; by default every one of the platform (`SUBSCRIPTIONS`). */
  subscriptions?: readonly Subscription[];
}

/** The AsyncAPI 3.0 document as this module builds it. */
export interface AsyncApiDocument {
  asyncapi: '3.0.0';
  id: string;
  info: { title: string; version: string; description: string; tags: Array<{ name: string }> };
  defaultContentType: 'application/json';
  servers: Record<string, JsonSchema>;
  channels: Record<string, { address: string; messages: Record<string, { $ref: string }> } & JsonSchema>;
  operations: Record<string, { action: 'send' | 'receive'; channel: { $ref: string } } & JsonSchema>;
  components: {
    messages: Record<string, JsonSchema>;
    schemas: Record<string, JsonSchema>;
    correlationIds: Record<string, JsonSchema>;
    securitySchemes: Record<string, JsonSchema>;
  };
}

/** The AsyncAPI 3.0 document of the events on `marketplace.events`: who publishes what, who consumes it from which queue. */
export function buildAsyncApi(options: AsyncApiOptions = {}): AsyncApiDocument {
  const events = options.events ?? publishedEventVersions();
  const subscriptions = options.subscriptions ?? SUBSCRIPTION_LIST;

  const messages: Record<string, JsonSchema> = {};
  const schemas: Record<string, JsonSchema> = { EventHeaders: headersSchema() };
  const channels: AsyncApiDocument['channels'] = {};
  const operations: AsyncApiDocument['operations'] = {};
  const byRoutingKey = new Map<string, EventVersionContract[]>();

  for (const event of events) {
    const key = messageKey(event);
    if (messages[key]) throw new Error(`${event.type}@${event.version} is listed twice`);
    const { producer, summary } = EVENT_PRODUCERS[event.type];
    schemas[dataSchemaKey(event)] = jsonSchemaOf(event.data, `${event.type}@${event.version}`);
    messages[key] = {
      name: `${event.type}@${event.version}`,
      title: `${event.type} v${event.version}`,
      summary,
      description: `Published by ${producer} through its outbox (at least once; AMQP properties \`messageId\` = \`id\`, \`correlationId\`, \`type\`, persistent, \`timestamp\`).`,
      contentType: 'application/json',
      headers: { $ref: `${SCHEMA_REF}EventHeaders` },
      payload: payloadOf(event),
      correlationId: { $ref: '#/components/correlationIds/correlationId' },
      tags: [{ name: producer }],
      bindings: { amqp: { messageType: event.type, bindingVersion: BINDING_VERSION } },
    };
    const routingKey = routingKeyOf(event.type, event.version);
    byRoutingKey.set(routingKey, [...(byRoutingKey.get(routingKey) ?? []), event]);
  }

  const messageRefs = (list: readonly EventVersionContract[]) =>
    Object.fromEntries(list.map((event) => [messageKey(event), { $ref: `#/components/messages/${messageKey(event)}` }]));

  for (const [routingKey, list] of byRoutingKey) {
    channels[routingKey] = {
      address: routingKey,
      title: routingKey,
      description: `Routing key \`${routingKey}\` on the \`${EVENTS_EXCHANGE}\` topic exchange.`,
      messages: messageRefs(list),
      bindings: {
        amqp: {
          is: 'routingKey',
          exchange: { name: EVENTS_EXCHANGE, type: 'topic', durable: true, autoDelete: false, vhost: '/' },
          bindingVersion: BINDING_VERSION,
        },
      },
    };
    for (const event of list) {
      const { producer } = EVENT_PRODUCERS[event.type];
      const channelMessage = `#/channels/${escapePointer(routingKey)}/messages/${messageKey(event)}`;
      operations[`${producer}.send.${routingKey}`] = {
        action: 'send',
        channel: { $ref: `#/channels/${escapePointer(routingKey)}` },
        title: `${producer} publishes ${event.type}@${event.version}`,
        summary: `${producer} publishes ${event.type} v${event.version} (from its outbox, with publisher confirms).`,
        messages: [{ $ref: channelMessage }],
        tags: [{ name: producer }],
        bindings: { amqp: { deliveryMode: 2, timestamp: true, bindingVersion: BINDING_VERSION } },
      };
    }
  }

  for (const subscription of subscriptions) {
    const routingKeys = subscriptionRoutingKeys(subscription);
    const missing = routingKeys.filter((routingKey) => !byRoutingKey.has(routingKey));
    if (missing.length) throw new Error(`The queue ${subscription.queue} binds ${missing.join(', ')}, which no listed event travels under`);
    const received = routingKeys.flatMap((routingKey) => byRoutingKey.get(routingKey)!);
    const channelKey = queueChannelKey(subscription.queue);
    const consumer = subscription.queue.split('.')[0]!;
    channels[channelKey] = {
      address: subscription.queue,
      title: `queue ${subscription.queue}`,
      description: `The consuming queue \`${subscription.queue}\`, bound to \`${EVENTS_EXCHANGE}\` under ${routingKeys.map((key) => `\`${key}\``).join(', ')}; its dead letters wait in \`${subscription.queue}.dlq\`.`,
      messages: messageRefs(received),
      bindings: {
        amqp: {
          is: 'queue',
          queue: { name: subscription.queue, durable: true, exclusive: false, autoDelete: false, vhost: '/' },
          'x-bindings': routingKeys.map((routingKey) => ({ exchange: EVENTS_EXCHANGE, routingKey })),
          'x-dead-letter-queue': `${subscription.queue}.dlq`,
          bindingVersion: BINDING_VERSION,
        },
      },
    };
    operations[`${subscription.queue}.receive`] = {
      action: 'receive',
      channel: { $ref: `#/channels/${escapePointer(channelKey)}` },
      title: `${consumer} consumes ${subscription.queue}`,
      summary: `${consumer} receives ${routingKeys.join(', ')} from the queue ${subscription.queue}.`,
      description: deliveryDescription(subscription, routingKeys),
      messages: received.map((event) => ({ $ref: `#/channels/${escapePointer(channelKey)}/messages/${messageKey(event)}` })),
      tags: [{ name: consumer }],
      bindings: { amqp: { ack: true, bindingVersion: BINDING_VERSION } },
      'x-retry': {
        ...CONSUMER_RETRY_POLICY,
        retryQueues: CONSUMER_RETRY_POLICY.retryDelaysMs.map((_, index) => `${subscription.queue}.retry.${index + 1}`),
      },
      'x-dead-letter': { exchange: DEAD_LETTER_EXCHANGE, routingKey: subscription.queue, queue: `${subscription.queue}.dlq` },
    };
  }

  const services = [
    ...new Set(Object.values(operations).flatMap((operation) => (operation.tags as Array<{ name: string }>).map((tag) => tag.name))),
  ];
  return {
    asyncapi: '3.0.0',
    id: 'urn:marketplace:events',
    info: {
      title: 'Marketplace events',
      version: contractsVersion(),
      description: [
        `The integration events of the marketplace on RabbitMQ: every event is published to the \`${EVENTS_EXCHANGE}\` topic exchange under its routing key`,
        '(version 1: the type itself; version N ≥ 2: `<type>.v<N>`), as JSON in the same envelope, and consumed from durable quorum queues, one per consuming concern.',
        'Adding an optional field is compatible; any other change of shape is a new version, published beside the old one while a consumer still reads it.',
        'Generated from `@mkt/contracts` (`buildAsyncApi`); `info.version` is that package’s version.',
        'Exchange and queue names here are production’s; with `BUS_NAMESPACE` set (tests) each is prefixed with `<namespace>.`.',
      ].join(' '),
      tags: services.sort().map((name) => ({ name })),
    },
    defaultContentType: 'application/json',
    servers: {
      rabbitmq: {
        host: '{host}',
        protocol: 'amqp',
        protocolVersion: '0.9.1',
        title: 'RabbitMQ',
        description: 'The broker every service reaches through its `AMQP_URL` (RabbitMQ 3.10+ or 4.x; quorum queues).',
        variables: { host: { default: 'localhost:5672', description: 'Host and port of the broker (`AMQP_URL`).' } },
        security: [{ $ref: '#/components/securitySchemes/amqpUser' }],
      },
    },
    channels,
    operations,
    components: {
      messages,
      schemas,
      correlationIds: {
        correlationId: {
          description: 'The request that caused the event, carried along a saga (also sent as the AMQP `correlationId` property).',
          location: '$message.payload#/correlationId',
        },
      },
      securitySchemes: { amqpUser: { type: 'userPassword', description: 'The user and password of `AMQP_URL`.' } },
    },
  };
}

/** A key as one JSON Pointer segment (RFC 6901). */
function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
