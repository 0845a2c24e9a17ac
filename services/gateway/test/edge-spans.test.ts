import type { Server } from 'node:http';
import { initTracing } from '@mkt/kit/tracing';
import { createLogger } from '@mkt/kit/logger';
import { renderMetrics } from '@mkt/kit/metrics';
import { waitFor } from '@mkt/infra';
import { disconnectDatabase, rawRequest, startGateway, startUpstream, urlOf, type Gateway } from './harness';

// The gateway with tracing on, as main.ts starts it (its server spans are the edge's own), every
// new trace sampled, exported by the SDK's console exporter (an OTLP exporter cannot load in
// jest's module runtime), whose output is read here: a span's `client.address` is the address
// the edge worked out, never one the client wrote — also on the 404 the edge answers itself for a
// target it does not route. A proxied request's access log line and its duration's exemplar carry
// its server span's trace.

/** The attributes of every exported span. */
const exported: Array<Record<string, unknown>> = [];
/** Every exported span's ids and kind, with its attributes. */
const spans: Array<{ traceId: string; id: string; kind: number; attributes: Record<string, unknown> }> = [];
/** The gateway's log lines. */
const lines: Array<Record<string, unknown>> = [];
let gateway: Gateway;
let catalog: Server;
let shutdown: () => Promise<void>;

beforeAll(async () => {
  jest.spyOn(console, 'dir').mockImplementation((span: unknown) => {
    const attributes = (span as { attributes?: Record<string, unknown> } | null)?.attributes;
    if (attributes) exported.push(attributes);
    if (attributes) spans.push(span as (typeof spans)[number]);
  });
  Object.assign(process.env, { OTEL_TRACES_EXPORTER: 'console', OTEL_TRACES_SAMPLER: 'always_on', OTEL_BSP_SCHEDULE_DELAY: '50' });
  shutdown = initTracing('gateway-edge-spans', process.env, { undiciSpans: false, httpServerSpans: false }).shutdown;
  catalog = await startUpstream('catalog');
  const logger = createLogger('gateway', 'info', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  gateway = await startGateway(
    { RATE_LIMIT_IP_PER_MIN: '0', RATE_LIMIT_USER_PER_MIN: '0', CATALOG_URL: urlOf(catalog), ACCESS_LOG_SAMPLE_RATE: '1' },
    undefined,
    logger,
  );
});

afterAll(async () => {
  await gateway?.close();
  await new Promise((resolve) => catalog?.close(resolve));
  await disconnectDatabase();
  await shutdown?.();
  jest.restoreAllMocks();
});

test("a proxied request's access log line and its duration's exemplar carry its server span's trace", async () => {
  // Two requests, one after the other on the same connections: the second's answer arrives in
  // callbacks of sockets the first opened (in the first's context), its line must still carry its own.
  for (const agent of ['edge-span access-log 1', 'edge-span access-log 2']) {
    const answer = await fetch(`${gateway.url}/physical-products/categories`, { headers: { 'user-agent': agent } });
    expect(answer.status).toBe(200);
    const reqId = answer.headers.get('x-request-id');
    const server = await waitFor(async () => spans.find((span) => span.kind === 1 && span.attributes['user_agent.original'] === agent), {
      what: 'the exported server span',
    });
    const line = await waitFor(async () => lines.find((entry) => entry.reqId === reqId && entry.msg === 'request completed'), {
      what: 'the access log line',
    });
    expect(line).toMatchObject({ upstream: 'catalog', trace_id: server!.traceId, span_id: server!.id });
    // One exemplar per bucket (the latest observation in it): this request's is in the bucket of its duration.
    const exemplars = (await renderMetrics(true)).text
      .split('\n')
      .filter(
        (l) =>
          l.startsWith('marketplace_http_request_duration_seconds_bucket{') && l.includes('route="proxy:catalog"') && l.includes(' # {'),
      )
      .map((l) => l.slice(l.indexOf(' # {') + 3, l.indexOf('}', l.indexOf(' # {')) + 1));
    expect(exemplars).toContain(`{trace_id="${server!.traceId}",span_id="${server!.id}"}`);
  }
});

test.each([
  ['an absolute-form target', 'GET http://evil.example/wallets/banks', 'http://evil.example/wallets/banks'],
  ['a dot segment', 'GET /wallets/../metrics', '/wallets/../metrics'],
])('the 404 for %s: its server span records the socket address, not the client address the client wrote', async (_, line, marker) => {
  const written = { 'x-client-address': '203.0.113.66', 'x-forwarded-for': '203.0.113.67', 'user-agent': `edge-span ${marker}` };
  expect((await rawRequest(gateway.url, line, written)).status).toBe(404);
  const span = await waitFor(async () => exported.find((attributes) => attributes['user_agent.original'] === written['user-agent']), {
    what: 'the exported server span',
  });
  expect(span!['http.response.status_code']).toBe(404);
  expect(span!['client.address']).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
});
