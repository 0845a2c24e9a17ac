import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An OTLP/HTTP JSON receiver in the test's process (`POST /v1/traces`), keeping every span it is
 * sent, and the environment that makes a started system export to it: http/json, a short batch
 * delay, new traces sampled at a ratio of 0 (a trace is exported only when a sampled parent says so).
 */

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
}

export interface OtlpReceiver {
  /** Every span received so far, in arrival order. */
  spans: ReceivedSpan[];
  /** The OTEL_* variables that point a process at this receiver. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** OTLP/JSON ids are hex; a base64 one (some encoders) is made hex. */
const hex = (id: unknown): string => {
  const text = typeof id === 'string' ? id : '';
  return /^[0-9a-f]*$/i.test(text) ? text.toLowerCase() : Buffer.from(text, 'base64').toString('hex');
};

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
const valueOf = (value: AnyValue | undefined): unknown =>
  value?.stringValue ?? (value?.intValue !== undefined ? Number(value.intValue) : (value?.boolValue ?? value?.doubleValue));
const attributesOf = (list: Array<{ key: string; value: AnyValue }> | undefined) =>
  Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));

export function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(404).end();
        return;
      }
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as any;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
        for (const scope of resourceSpans.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            spans.push({
              service,
              traceId: hex(span.traceId),
              spanId: hex(span.spanId),
              parentSpanId: hex(span.parentSpanId),
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              links: (span.links ?? []).map((link: { traceId: string; spanId: string }) => ({
                traceId: hex(link.traceId),
                spanId: hex(link.spanId),
              })),
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        spans,
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_BSP_SCHEDULE_DELAY: '100',
          OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
          OTEL_TRACES_SAMPLER_ARG: '0',
        },
        close: () => new Promise<void>((done) => server.close(() => done())),
      }),
    ),
  );
}
