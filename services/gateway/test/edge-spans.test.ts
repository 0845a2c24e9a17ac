import { initTracing } from '@mkt/kit/tracing';
import { waitFor } from '@mkt/infra';
import { disconnectDatabase, rawRequest, startGateway, type Gateway } from './harness';

// The gateway with tracing on, as main.ts starts it (its server spans are the edge's own), every
// new trace sampled, exported by the SDK's console exporter (an OTLP exporter cannot load in
// jest's module runtime), whose output is read here: a span's `client.address` is the address
// the edge worked out, never one the client wrote — also on the 404 the edge answers itself for a
// target it does not route.

/** The attributes of every exported span. */
const exported: Array<Record<string, unknown>> = [];
let gateway: Gateway;
let shutdown: () => Promise<void>;

beforeAll(async () => {
  jest.spyOn(console, 'dir').mockImplementation((span: unknown) => {
    const attributes = (span as { attributes?: Record<string, unknown> } | null)?.attributes;
    if (attributes) exported.push(attributes);
  });
  Object.assign(process.env, { OTEL_TRACES_EXPORTER: 'console', OTEL_TRACES_SAMPLER: 'always_on', OTEL_BSP_SCHEDULE_DELAY: '50' });
  shutdown = initTracing('gateway-edge-spans', process.env, { undiciSpans: false, httpServerSpans: false }).shutdown;
  gateway = await startGateway({ RATE_LIMIT_IP_PER_MIN: '0', RATE_LIMIT_USER_PER_MIN: '0' });
});

afterAll(async () => {
  await gateway?.close();
  await disconnectDatabase();
  await shutdown?.();
  jest.restoreAllMocks();
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
