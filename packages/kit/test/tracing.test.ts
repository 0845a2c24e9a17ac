import http, { type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import mongoose, { Schema } from 'mongoose';
import pino from 'pino';
import { makeEvent, ok, type IntegrationEvent } from '@mkt/contracts';
import { Bus, OutboxRelay, pendingEventsField } from '@mkt/kit/bus';
import { createService, mountRoute } from '@mkt/kit/http';
import { initTracing, tracingEnabled, outgoingTraceHeaders } from '@mkt/kit/tracing';
import { tracingRequested, traceLogFields } from '../src/tracing';
import { ensureOutboxIndexes } from '../src/bus/outbox';
import { openDatabase } from '@mkt/kit/db';
import { testEnv, testServers, uniqueName, waitFor } from '@mkt/infra';

// Tracing off (no OTEL_* exporter variable): no SDK, but an incoming `traceparent` is continued
// unchanged — on the calls a request makes, on the events it writes, through the outbox and the
// broker into the consumer's handling, and on the log lines written meanwhile.

const handle = initTracing('kit-test', {});
const lines: Array<Record<string, unknown>> = [];
const log = pino({ level: 'info', mixin: traceLogFields }, { write: (line: string) => void lines.push(JSON.parse(line)) });
const { mongoUrl, amqpUrl } = testServers();
const env = testEnv('kit_tracing');
const Order = mongoose.model(
  'TracedOrder',
  new Schema({ _id: { type: String, required: true }, pendingEvents: pendingEventsField }, { versionKey: false }),
);

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

let downstream: Server;
let service: Server;
let downstreamUrl = '';
let serviceUrl = '';
const received: IncomingHttpHeaders[] = [];
let bus: Bus;
let relay: OutboxRelay;
const handled: Array<{ event: IntegrationEvent<'review.created'>; madeInHandler: IntegrationEvent }> = [];
const queue = uniqueName('kit.tracing');

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );

beforeAll(async () => {
  downstream = http.createServer((req, res) => {
    received.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  downstreamUrl = await listen(downstream);
  await openDatabase(mongoose.connection, { url: mongoUrl, dbName: env.dbName, log });
  await ensureOutboxIndexes([{ name: 'orders', model: Order }]);
  bus = new Bus({ url: amqpUrl, log, namespace: env.namespace });
  await bus.consume({
    subscription: { queue, events: ['review.created'] },
    handlers: {
      'review.created': async (event) => {
        log.info('handling');
        const madeInHandler = makeEvent('review.created', { ...event.data, entityId: 'follow-up' }, { source: 'review' });
        handled.push({ event, madeInHandler });
      },
    },
  });
  await bus.start();
  relay = new OutboxRelay({ bus, log, sources: [{ name: 'orders', model: Order }] });
  const app = createService({
    name: 'kit-test',
    log,
    readiness: [],
    routes: (routes) => {
      mountRoute(routes, 'post', '/orders', async (req, res) => {
        log.info('in the handler');
        await fetch(`${downstreamUrl}/next`, { headers: outgoingTraceHeaders() });
        const event = makeEvent(
          'review.created',
          { reviewId: uniqueName('rev'), entityType: 'consultation_service', entityId: String(req.body.id), rating: 5 },
          { source: 'review' },
        );
        const doc = await Order.findOneAndUpdate(
          { _id: String(req.body.id) },
          { $push: { pendingEvents: event } },
          { upsert: true, new: true },
        ).lean();
        await relay.flush(Order, doc as never);
        res.json(ok({ traceparent: event.traceparent ?? null }));
      });
    },
  });
  service = http.createServer(app);
  serviceUrl = await listen(service);
});

afterAll(async () => {
  await relay.stop();
  await bus.close();
  await mongoose.disconnect();
  await new Promise((resolve) => service.close(resolve));
  await new Promise((resolve) => downstream.close(resolve));
  await handle.shutdown();
});

test('tracing is off without an exporter variable, on with one', () => {
  expect(tracingEnabled()).toBe(false);
  expect(tracingRequested({})).toBe(false);
  expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
  expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
  expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
  expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false);
  expect(tracingRequested({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false);
});

test('off: an incoming traceparent reaches the outgoing call, the event, the broker, the consumer and the log lines unchanged', async () => {
  const id = uniqueName('order');
  const res = await fetch(`${serviceUrl}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: TRACEPARENT, tracestate: 'vendor=1' },
    body: JSON.stringify({ id }),
  });
  expect(res.status).toBe(200);
  // The event carries the context it was written in (stored in the outbox document).
  expect(((await res.json()) as { data: { traceparent: string | null } }).data.traceparent).toBe(TRACEPARENT);
  // The downstream call carries the same trace (no SDK: the very same header).
  expect(received.at(-1)).toMatchObject({ traceparent: TRACEPARENT, tracestate: 'vendor=1' });
  // Through the outbox and the broker: the handler runs in the trace, an event it makes carries it.
  await waitFor(async () => handled.find(({ event }) => event.data.entityId === id), {
    what: 'the handling',
    timeoutMs: 15_000,
    intervalMs: 50,
  });
  const { event, madeInHandler } = handled.find((each) => each.event.data.entityId === id)!;
  expect(event.traceparent).toBeUndefined(); // headers, not the body
  expect(madeInHandler.traceparent).toBe(TRACEPARENT);
  // Log lines inside the request and the handling carry its ids.
  expect(lines.find((line) => line.msg === 'in the handler')).toMatchObject({ trace_id: TRACE_ID, span_id: '00f067aa0ba902b7' });
  expect(lines.find((line) => line.msg === 'handling')).toMatchObject({ trace_id: TRACE_ID });
  // The pending event is gone (published) and kept its trace context until then.
  expect((await Order.findById(id).lean())?.pendingEvents).toEqual([]);
});

test('off: a request without traceparent has no trace; its event and log lines carry none', async () => {
  const id = uniqueName('order');
  const res = await fetch(`${serviceUrl}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id }),
  });
  expect(((await res.json()) as { data: { traceparent: string | null } }).data.traceparent).toBeNull();
  expect(received.at(-1)?.traceparent).toBeUndefined();
  log.info('outside');
  expect(lines.at(-1)).not.toHaveProperty('trace_id');
});
