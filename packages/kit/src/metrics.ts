import { context, trace, type Context } from '@opentelemetry/api';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type RegistryContentType } from 'prom-client';

/** For a service's own gauges and counters on the registry (`registers: [getMetrics().registry]`). */
export { Counter, Gauge };

/**
 * One registry per process (one service per process); created on first use. Names and labels
 * are listed in docs/observability.md ("Metrics"); every label is bounded (no ids).
 */
export interface Metrics {
  registry: Registry<RegistryContentType>;
  /** RED per route: the route is its template (`/consultations/:id`), `unmatched`, or the gateway's `proxy:<upstream>`. */
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  eventsPublished: Counter<'type' | 'outcome'>;
  eventsConsumed: Counter<'queue' | 'type' | 'outcome'>;
  /** Time a consumer's handler took, by queue and outcome (acked, retried, dead_lettered, skipped_version). */
  eventHandlingDuration: Histogram<'queue' | 'outcome'>;
  /** From the event's `occurredAt` to its handler's success, by queue. */
  eventLag: Histogram<'queue'>;
  outboxBacklog: Gauge<'source'>;
  /** Age of the oldest pending event at the last sweep, by source (0: none). */
  outboxOldestPendingAge: Gauge<'source'>;
  deadLettered: Counter<'queue'>;
  /**
   * Events a consumer refused because their publisher does not own them (dead-lettered, never
   * handled nor retried), by queue, type and reason (`source`, `routing_key`, `publisher`, `unowned`).
   */
  eventsRefused: Counter<'queue' | 'type' | 'reason'>;
  /** Messages in each consumer queue's dead-letter queue (`<queue>.dlq`), read at scrape. */
  deadLetterQueueDepth: Gauge<'queue'>;
  jobRuns: Counter<'job_name' | 'outcome'>;
  jobDuration: Histogram<'job_name'>;
}

let metrics: Metrics | undefined;

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Event lag spans the outbox's grace and the consumers' retry delays (1 s, 5 s, 30 s). */
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900];
const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60];

export function getMetrics(): Metrics {
  if (metrics) return metrics;
  // prom-client only lets a metric keep exemplars on an OpenMetrics registry; it is switched to
  // the Prometheus text format at once and renders OpenMetrics only when asked (`renderMetrics`).
  const OpenMetricsRegistry = Registry as unknown as new (contentType: RegistryContentType) => Registry<RegistryContentType>;
  const registry = new OpenMetricsRegistry(Registry.OPENMETRICS_CONTENT_TYPE);
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  metrics = {
    registry,
    httpDuration: new Histogram({
      name: 'marketplace_http_request_duration_seconds',
      help: 'HTTP request durations by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: SECONDS_BUCKETS,
      enableExemplars: true,
      registers,
    }),
    eventsPublished: new Counter({
      name: 'marketplace_events_published_total',
      help: 'Events published to the broker, by type and outcome (confirmed, failed)',
      labelNames: ['type', 'outcome'],
      registers,
    }),
    eventsConsumed: new Counter({
      name: 'marketplace_events_consumed_total',
      help: 'Events handled by consumers, by queue, type and outcome (acked, retried, dead_lettered, skipped_version)',
      labelNames: ['queue', 'type', 'outcome'],
      registers,
    }),
    eventHandlingDuration: new Histogram({
      name: 'marketplace_event_handling_duration_seconds',
      help: "Time a consumer's handler took, by queue and outcome (acked, retried, dead_lettered, skipped_version)",
      labelNames: ['queue', 'outcome'],
      buckets: SECONDS_BUCKETS,
      enableExemplars: true,
      registers,
    }),
    eventLag: new Histogram({
      name: 'marketplace_event_lag_seconds',
      help: "From an event's occurredAt to its successful handling, by consumer queue",
      labelNames: ['queue'],
      buckets: LAG_BUCKETS,
      enableExemplars: true,
      registers,
    }),
    outboxBacklog: new Gauge({
      name: 'marketplace_outbox_backlog',
      help: 'Documents holding events not yet published, at the last sweep',
      labelNames: ['source'],
      registers,
    }),
    outboxOldestPendingAge: new Gauge({
      name: 'marketplace_outbox_oldest_pending_age_seconds',
      help: 'Age of the oldest event not yet published, at the last sweep (0: none pending)',
      labelNames: ['source'],
      registers,
    }),
    deadLettered: new Counter({
      name: 'marketplace_dead_lettered_total',
      help: 'Messages sent to the dead-letter exchange, by queue',
      labelNames: ['queue'],
      registers,
    }),
    eventsRefused: new Counter({
      name: 'marketplace_events_refused_total',
      help: 'Events refused by a consumer because their publisher does not own them (dead-lettered), by queue, type and reason',
      labelNames: ['queue', 'type', 'reason'],
      registers,
    }),
    deadLetterQueueDepth: new Gauge({
      name: 'marketplace_dead_letter_queue_messages',
      help: "Messages waiting in each consumer queue's dead-letter queue (read from the broker at scrape)",
      labelNames: ['queue'],
      registers,
    }),
    jobRuns: new Counter({
      name: 'marketplace_job_runs_total',
      help: 'Runs of background jobs (sweepers), by job_name and outcome (ok, failed); not `job`, which Prometheus sets per target',
      labelNames: ['job_name', 'outcome'],
      registers,
    }),
    jobDuration: new Histogram({
      name: 'marketplace_job_duration_seconds',
      help: 'Duration of background job runs, by job',
      labelNames: ['job_name'],
      buckets: JOB_BUCKETS,
      registers,
    }),
  };
  registry.setContentType(Registry.PROMETHEUS_CONTENT_TYPE);
  return metrics;
}

/**
 * The exemplar of an observation: the span's trace id when the span of `ctx` (the active
 * context by default) is sampled (OpenTelemetry), else none (and prom-client keeps no exemplar).
 */
export function traceExemplar(ctx: Context = context.active()): Record<string, string> {
  const ids = trace.getSpan(ctx)?.spanContext();
  if (!ids || (ids.traceFlags & 1) === 0) return {};
  return { trace_id: ids.traceId, span_id: ids.spanId };
}

/**
 * A histogram observation with the trace of `ctx` (the active context by default) as its
 * exemplar: a listener that kept its request's context need not enter it to observe.
 */
export function observeWithTrace<L extends string>(
  histogram: Histogram<L>,
  labels: Partial<Record<L, string>>,
  seconds: number,
  ctx?: Context,
): void {
  (histogram.observe as unknown as (observation: object) => void)({ labels, value: seconds, exemplarLabels: traceExemplar(ctx) });
}

/** Whether a scraper's `Accept` header asks for OpenMetrics (which carries the exemplars). */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  return !!accept && /application\/openmetrics-text/i.test(accept);
}

let rendering: Promise<unknown> = Promise.resolve();
const scrapeHooks = new Set<() => Promise<void>>();
const SCRAPE_HOOK_TIMEOUT_MS = 2_000;

/**
 * Runs `hook` before each render (gauges read at scrape: dead-letter queue depths, open holds).
 * A hook that fails or takes longer than 2 s leaves its gauges as they were. Returns the removal.
 */
export function beforeScrape(hook: () => Promise<void>): () => void {
  scrapeHooks.add(hook);
  return () => scrapeHooks.delete(hook);
}

async function runScrapeHooks(): Promise<void> {
  await Promise.all(
    [...scrapeHooks].map((hook) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, SCRAPE_HOOK_TIMEOUT_MS);
        timer.unref();
      });
      return Promise.race([hook().catch(() => undefined), timeout]).finally(() => clearTimeout(timer));
    }),
  );
}

/**
 * The exposition text: OpenMetrics (with exemplars) when the scraper asks for it, else the
 * Prometheus text format. prom-client renders OpenMetrics by switching the registry and renaming
 * its counters (it drops `_total`, then adds it back per sample), so renders take turns and the
 * names are put back afterwards.
 */
export function renderMetrics(openMetrics: boolean): Promise<{ contentType: string; text: string }> {
  const { registry } = getMetrics();
  const run = rendering.then(async () => {
    await runScrapeHooks();
    if (!openMetrics) return { contentType: Registry.PROMETHEUS_CONTENT_TYPE, text: await registry.metrics() };
    const names = registry.getMetricsAsArray().map((metric) => [metric, metric.name] as const);
    registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    try {
      return { contentType: Registry.OPENMETRICS_CONTENT_TYPE, text: await registry.metrics() };
    } finally {
      registry.setContentType(Registry.PROMETHEUS_CONTENT_TYPE);
      for (const [metric, name] of names) (metric as { name: string }).name = name;
    }
  });
  rendering = run.catch(() => undefined);
  return run;
}
