import { randomBytes } from 'node:crypto';
import http, { type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, trace } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import { waitFor } from '@mkt/infra';
import { distrustIncomingTraceContext, initTracing, traceRequests } from '../src/tracing';

// Server spans started by the process itself (`traceRequests`, the gateway's edge), tracing on
// (the console exporter, silenced: the OTLP exporters load their transport with a dynamic
// `import()`, which jest's module system refuses); new traces sampled at a ratio of 0, so a span
// records only under a sampled parent the server follows. Real HTTP servers: one trusting its
// callers' trace headers, one not (`distrustIncomingTraceContext`, as the gateway). The spans are
// read as the SDK holds them once ended (what an exporter is given).

/** What each handled request saw: its active trace id, and whether its span records. */
const seen: Array<{ path: string; traceId: string | undefined; recording: boolean; span: unknown }> = [];
const app: RequestListener = (req, res) => {
  const span = trace.getSpan(context.active());
  seen.push({ path: req.url ?? '', traceId: span?.spanContext().traceId, recording: span?.isRecording() ?? false, span });
  // What express's instrumentation does for a matched route.
  const metadata = getRPCMetadata(context.active());
  if (metadata?.type === RPCType.HTTP && req.url?.startsWith('/things/')) metadata.route = '/things/:id';
  res.writeHead(req.url === '/broken' ? 503 : 200, { 'content-type': 'text/plain' }).end('ok');
};

let trusting: Server;
let distrusting: Server;
const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const listen = (server: Server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
let shutdown: () => Promise<void>;

beforeAll(async () => {
  jest.spyOn(console, 'dir').mockImplementation(() => undefined);
  jest.spyOn(console, 'log').mockImplementation(() => undefined);
  Object.assign(process.env, {
    OTEL_TRACES_EXPORTER: 'console',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0',
    OTEL_BSP_SCHEDULE_DELAY: '50',
  });
  shutdown = initTracing('kit-server-spans', process.env, { undiciSpans: false, httpServerSpans: false }).shutdown;
  trusting = http.createServer(traceRequests(app));
  distrusting = http.createServer(traceRequests(app));
  distrustIncomingTraceContext(distrusting);
  await listen(trusting);
  await listen(distrusting);
});

afterAll(async () => {
  for (const server of [trusting, distrusting]) await new Promise((resolve) => server?.close(resolve));
  await shutdown?.();
});

/** A caller's own trace, sampled. */
function callerTrace() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** The span of the request handled at `path`, as the SDK holds it once ended (what the exporter sends). */
interface EndedSpan {
  name: string;
  kind: number;
  ended: boolean;
  attributes: Record<string, unknown>;
  links: Array<{ context: { traceId: string; spanId: string } }>;
  parentSpanContext?: { spanId: string };
  spanContext(): { traceId: string };
}
const endedSpanOf = async (path: string) => {
  const span = (await waitFor(async () => seen.find((each) => each.path === path)?.span as EndedSpan | undefined, {
    what: 'the request',
    until: (found) => found?.ended === true,
  }))!;
  return {
    traceId: span.spanContext().traceId,
    parentSpanId: span.parentSpanContext?.spanId,
    name: span.name,
    kind: span.kind,
    attributes: span.attributes,
  };
};

test('a trusted caller’s sampled trace is followed: one SERVER span, its child, with the request’s attributes and the answer’s status', async () => {
  const caller = callerTrace();
  const res = await fetch(`${urlOf(trusting)}/things/42?token=secret`, {
    headers: { traceparent: caller.traceparent, 'user-agent': 'span-test' },
  });
  expect(res.status).toBe(200);
  const span = await endedSpanOf('/things/42?token=secret');
  expect(span).toMatchObject({ traceId: caller.traceId, parentSpanId: caller.spanId, kind: 1, name: 'GET /things/:id' });
  expect(span.attributes).toMatchObject({
    'http.request.method': 'GET',
    'url.scheme': 'http',
    'url.path': '/things/42',
    'http.route': '/things/:id',
    'http.response.status_code': 200,
    'server.address': '127.0.0.1',
    'server.port': (trusting.address() as AddressInfo).port,
    'network.protocol.version': '1.1',
    'user_agent.original': 'span-test',
    'client.address': '127.0.0.1',
  });
  // The query is not recorded (it may carry a token).
  expect(JSON.stringify(span.attributes)).not.toContain('secret');
  expect(seen.find((each) => each.path.startsWith('/things/42'))).toMatchObject({ traceId: caller.traceId, recording: true });
});

test('an answer from 500 on marks the span failed; a name without a route is the method', async () => {
  const caller = callerTrace();
  expect((await fetch(`${urlOf(trusting)}/broken`, { headers: { traceparent: caller.traceparent } })).status).toBe(503);
  const span = await endedSpanOf('/broken');
  expect(span).toMatchObject({ traceId: caller.traceId, name: 'GET', kind: 1 });
  expect(span.attributes).toMatchObject({ 'http.response.status_code': 503, 'url.path': '/broken', 'error.type': '503' });
  expect(span.attributes).not.toHaveProperty('http.route');
});

test('a distrusted caller’s sampled traceparent decides nothing: a trace of the server’s own, unsampled at ratio 0: nothing recorded', async () => {
  const caller = callerTrace();
  expect(
    (await fetch(`${urlOf(distrusting)}/things/7`, { headers: { traceparent: caller.traceparent, baggage: 'tenant=outsider' } })).status,
  ).toBe(200);
  const handled = seen.find((each) => each.path === '/things/7');
  // The handler runs in a valid trace of the server's own: not the caller's, not recording.
  expect(handled?.traceId).toMatch(/^[0-9a-f]{32}$/);
  expect(handled?.traceId).not.toBe(caller.traceId);
  expect(handled?.recording).toBe(false);
});

test('probes are not traced, whatever their caller sends', async () => {
  const caller = callerTrace();
  expect((await fetch(`${urlOf(trusting)}/healthz`, { headers: { traceparent: caller.traceparent } })).status).toBe(200);
  expect(seen.find((each) => each.path === '/healthz')).toMatchObject({ recording: false });
});
