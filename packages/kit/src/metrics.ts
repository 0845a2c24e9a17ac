import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per process (one service per process); created on first use. */
export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  eventsPublished: Counter<'type' | 'outcome'>;
  eventsConsumed: Counter<'queue' | 'type' | 'outcome'>;
  outboxBacklog: Gauge<'source'>;
  deadLettered: Counter<'queue'>;
}

let metrics: Metrics | undefined;

export function getMetrics(): Metrics {
  if (metrics) return metrics;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  metrics = {
    registry,
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request durations by method, route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    eventsPublished: new Counter({
      name: 'events_published_total',
      help: 'Events published to the broker, by type and outcome (confirmed, failed)',
      labelNames: ['type', 'outcome'],
      registers: [registry],
    }),
    eventsConsumed: new Counter({
      name: 'events_consumed_total',
      help: 'Events handled by consumers, by queue, type and outcome (acked, retried, dead_lettered)',
      labelNames: ['queue', 'type', 'outcome'],
      registers: [registry],
    }),
    outboxBacklog: new Gauge({
      name: 'outbox_backlog',
      help: 'Documents holding events not yet published, at the last sweep',
      labelNames: ['source'],
      registers: [registry],
    }),
    deadLettered: new Counter({
      name: 'dead_lettered_total',
      help: 'Messages sent to the dead-letter exchange, by queue',
      labelNames: ['queue'],
      registers: [registry],
    }),
  };
  return metrics;
}
