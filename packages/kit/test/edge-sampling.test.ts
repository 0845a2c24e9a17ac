import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, ROOT_CONTEXT, SamplingDecision, trace } from '@opentelemetry/api';
import type * as SdkTrace from '@opentelemetry/sdk-trace';
import { initTracing, traceRequests } from '../src/tracing';

// The edge (`traceRequests`) decides each request's sampling itself and starts the SDK's span only
// for a request it samples: the decision must be the one the SDK's sampler makes on the trace id
// the request keeps (a ratio decides on the id: were the SDK to draw another id and decide again,
// about half of the kept traces would be another decision's). Tracing on (the console exporter,
// silenced), new traces sampled at 0.5.

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { TraceIdRatioBasedSampler } = require('@opentelemetry/sdk-trace') as typeof SdkTrace;
const seen: Array<{ traceId: string; recording: boolean }> = [];
let server: Server;
let shutdown: () => Promise<void>;

beforeAll(async () => {
  jest.spyOn(console, 'dir').mockImplementation(() => undefined);
  jest.spyOn(console, 'log').mockImplementation(() => undefined);
  Object.assign(process.env, {
    OTEL_TRACES_EXPORTER: 'console',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.5',
  });
  shutdown = initTracing('kit-edge-sampling', process.env, { undiciSpans: false, httpServerSpans: false }).shutdown;
  server = http.createServer(
    traceRequests((_req, res) => {
      const span = trace.getSpan(context.active())!;
      seen.push({ traceId: span.spanContext().traceId, recording: span.isRecording() });
      res.end('ok');
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await shutdown?.();
});

test('each request is sampled exactly when the ratio keeps its own trace id', async () => {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/things`;
  const asked = jest.spyOn(TraceIdRatioBasedSampler.prototype, 'shouldSample');
  for (let i = 0; i < 40; i += 1) expect((await fetch(url)).status).toBe(200);
  // Every trace id the ratio was asked about is one a request kept: no decision made on an id
  // that was then dropped for another (the SDK's span drawing an id of its own and deciding again).
  const kept = new Set(seen.map((each) => each.traceId));
  expect(asked.mock.calls.map(([, traceId]) => traceId).filter((traceId) => !kept.has(traceId))).toEqual([]);
  asked.mockRestore();
  const ratio = new TraceIdRatioBasedSampler(0.5);
  const expected = seen.map(({ traceId }) => ratio.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED);
  expect(seen.map((each) => each.recording)).toEqual(expected);
  // Both decisions were made (at 0.5, 40 requests all alike: once in 2^39).
  expect(new Set(expected).size).toBe(2);
  expect(new Set(seen.map((each) => each.traceId)).size).toBe(40);
});
