import { ROOT_CONTEXT, context, trace, type Context, type ContextManager } from '@opentelemetry/api';
import mongoose, { Schema } from 'mongoose';
import pino from 'pino';
import { makeEvent } from '@mkt/contracts';
import { OutboxRelay, pendingEventsField } from '@mkt/kit/bus';
import { createRuntime, periodicJob, stopRuntime, type StartedRuntime } from '@mkt/kit/runtime';
import { createService } from '@mkt/kit/http';
import { ensureOutboxIndexes } from '../src/bus/outbox';
import { getMetrics, observeWithTrace, renderMetrics } from '@mkt/kit/metrics';
import { startRuntime } from '../src/runtime';
import { openDatabase } from '@mkt/kit/db';
import { testEnv, testServers, uniqueName, waitFor } from '@mkt/infra';
import { Registry, collectDefaultMetrics } from 'prom-client';

/** The metrics kit records, read back from a real runtime's /metrics (real MongoDB and RabbitMQ). */
const log = pino({ level: 'silent' });
const { mongoUrl, amqpUrl } = testServers();
const env = testEnv('kit_metrics');
const queue = uniqueName('kit.metrics');
const Parcel = mongoose.model(
  'Parcel',
  new Schema({ _id: { type: String, required: true }, pendingEvents: pendingEventsField }, { versionKey: false }),
);

let started: StartedRuntime;
let jobRuns = 0;

beforeAll(async () => {
  await openDatabase(mongoose.connection, { url: mongoUrl, dbName: env.dbName, log });
  started = await startRuntime({
    runtime: createRuntime({
      name: 'metrics-test',
      config: { AMQP_URL: amqpUrl, BUS_NAMESPACE: env.namespace },
      log,
      db: mongoose.connection,
    }),
    config: { PORT: 0, HOST: '127.0.0.1' },
    consumers: [
      {
        subscription: { queue, events: ['review.created'] },
        retryDelaysMs: [20],
        handlers: {
          'review.created': async (event) => {
            if (event.data.entityId.startsWith('failing')) throw new Error('handler broke');
          },
        },
      },
    ],
    jobs: [
      periodicJob('metrics-test-job', 30, async () => {
        jobRuns += 1;
        if (jobRuns % 2 === 0) throw new Error('every other run fails');
      }),
    ],
    app: createService({ name: 'metrics-test', log, readiness: [], routes: () => undefined }),
    brokerTimeoutMs: 30_000,
  });
});

afterAll(async () => {
  await stopRuntime(started);
  await mongoose.disconnect();
});

const review = (entityId: string, occurredAt = new Date().toISOString()) => ({
  ...makeEvent(
    'review.created',
    { reviewId: uniqueName('rev'), entityType: 'consultation_service', entityId, rating: 5 },
    { source: 'review' },
  ),
  occurredAt,
});

/** A sample's value from the exposition text (NaN when absent). */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([key, value]) => l.includes(`${key}="${value}"`)));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : NaN;
}
const scrape = async () => (await fetch(`${started.url}/metrics`)).text();
const consumerQueue = () => `${env.namespace}.${queue}`;

test('a consumer queue counts its outcomes, times its handler, measures the lag from occurredAt, and reports its dead letters', async () => {
  const bus = started.runtime.bus;
  await bus.publish(review(uniqueName('ok'), new Date(Date.now() - 42_000).toISOString()));
  await bus.publish(review(uniqueName('failing')));
  await bus.publishRaw(bus.names.events, 'review.created', Buffer.from('{not json'), { messageId: uniqueName('poison') });
  let text = '';
  await waitFor(
    async () => {
      text = await scrape();
      return sample(text, 'marketplace_dead_letter_queue_messages', { queue: consumerQueue() }) === 2;
    },
    { what: 'two dead letters counted at scrape', timeoutMs: 20_000, intervalMs: 100 },
  );
  const q = { queue: consumerQueue() };
  expect(sample(text, 'marketplace_events_consumed_total', { ...q, outcome: 'acked' })).toBe(1);
  expect(sample(text, 'marketplace_events_consumed_total', { ...q, outcome: 'retried' })).toBe(1);
  expect(sample(text, 'marketplace_event_handling_duration_seconds_count', { ...q, outcome: 'acked' })).toBe(1);
  expect(sample(text, 'marketplace_event_handling_duration_seconds_count', { ...q, outcome: 'retried' })).toBe(1);
  expect(sample(text, 'marketplace_event_handling_duration_seconds_count', { ...q, outcome: 'dead_lettered' })).toBe(2);
  // The acked event occurred 42 s before it was handled: in the lag's (30, 60] bucket.
  expect(sample(text, 'marketplace_event_lag_seconds_count', q)).toBe(1);
  expect(sample(text, 'marketplace_event_lag_seconds_bucket', { ...q, le: '30' })).toBe(0);
  expect(sample(text, 'marketplace_event_lag_seconds_bucket', { ...q, le: '60' })).toBe(1);
});

test('background jobs count their runs by outcome and time them', async () => {
  await waitFor(async () => jobRuns >= 4, { what: 'four job runs', timeoutMs: 10_000, intervalMs: 20 });
  const text = await scrape();
  expect(sample(text, 'marketplace_job_runs_total', { job_name: 'metrics-test-job', outcome: 'ok' })).toBeGreaterThanOrEqual(2);
  expect(sample(text, 'marketplace_job_runs_total', { job_name: 'metrics-test-job', outcome: 'failed' })).toBeGreaterThanOrEqual(1);
  expect(sample(text, 'marketplace_job_duration_seconds_count', { job_name: 'metrics-test-job' })).toBeGreaterThanOrEqual(3);
});

test("the outbox reports its oldest pending event's age at each sweep, and 0 once published", async () => {
  await ensureOutboxIndexes([{ name: 'parcels', model: Parcel }]);
  const relay = new OutboxRelay({ bus: started.runtime.bus, log, sources: [{ name: 'parcels', model: Parcel }] });
  await Parcel.create({ _id: uniqueName('parcel'), pendingEvents: [review('x', new Date(Date.now() - 120_000).toISOString())] });
  await relay.sweep();
  const age = sample(await scrape(), 'marketplace_outbox_oldest_pending_age_seconds', { source: 'parcels' });
  expect(age).toBeGreaterThanOrEqual(120);
  expect(age).toBeLessThan(600);
  await relay.sweep();
  expect(sample(await scrape(), 'marketplace_outbox_oldest_pending_age_seconds', { source: 'parcels' })).toBe(0);
});

/** The smallest context manager: enough for `context.with` around synchronous code (the SDK brings its own). */
class StackContextManager implements ContextManager {
  private stack: Context[] = [];
  active = () => this.stack.at(-1) ?? ROOT_CONTEXT;
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A) {
    this.stack.push(ctx);
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.stack.pop();
    }
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable() {
    return this;
  }
  disable() {
    this.stack = [];
    return this;
  }
}

test('an observation made in a sampled span carries its trace id as an exemplar, served only as OpenMetrics', async () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const spanId = '00f067aa0ba902b7';
  context.setGlobalContextManager(new StackContextManager());
  try {
    const span = trace.wrapSpanContext({ traceId, spanId, traceFlags: 1 });
    context.with(trace.setSpan(ROOT_CONTEXT, span), () => observeWithTrace(getMetrics().eventLag, { queue: 'exemplar-test' }, 0.3));
    // Not sampled: no exemplar taken from it.
    const unsampled = trace.wrapSpanContext({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 0 });
    context.with(trace.setSpan(ROOT_CONTEXT, unsampled), () => observeWithTrace(getMetrics().eventLag, { queue: 'exemplar-test' }, 0.3));
  } finally {
    context.disable();
  }
  const open = await fetch(`${started.url}/metrics`, { headers: { accept: 'application/openmetrics-text; version=1.0.0' } });
  expect(open.headers.get('content-type')).toContain('application/openmetrics-text');
  const text = await open.text();
  const bucket = text
    .split('\n')
    .find((l) => l.startsWith('marketplace_event_lag_seconds_bucket{') && l.includes('queue="exemplar-test"') && l.includes('le="0.5"'));
  expect(bucket).toContain(`# {trace_id="${traceId}",span_id="${spanId}"} 0.3`);
  expect(text).not.toContain('a'.repeat(32));
  // The Prometheus text format has no exemplars, and its counters keep `_total` after an OpenMetrics render.
  const plain = (await renderMetrics(false)).text;
  expect(plain).not.toContain(traceId);
  expect(plain).toMatch(/^# TYPE marketplace_events_consumed_total counter$/m);
});

test('every metric kit defines is named marketplace_…; only prom-client’s default process and Node.js metrics are not', async () => {
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  const standard = new Set(defaults.getMetricsAsArray().map((metric) => metric.name));
  const names = getMetrics()
    .registry.getMetricsAsArray()
    .map((metric) => metric.name);
  const ours = names.filter((name) => !standard.has(name));
  expect(ours.length).toBeGreaterThanOrEqual(12);
  expect(ours.filter((name) => !/^marketplace_[a-z][a-z0-9_]*$/.test(name))).toEqual([]);
  expect([...standard].filter((name) => !/^(process|nodejs)_/.test(name))).toEqual([]);
  expect(names).toEqual(expect.arrayContaining([...standard]));
});
