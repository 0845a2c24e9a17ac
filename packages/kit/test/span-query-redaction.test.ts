import { spawn, type ChildProcess } from 'node:child_process';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { waitFor } from '@mkt/infra';

// Tracing on as every service but the gateway runs it (the http instrumentation's server spans),
// every new trace sampled, in a process of its own (the instrumentation patches `http` as the
// process loads it): a request's query reaches the exported span's `url.query` with each
// credential's value redacted — the wallet's checkout pages carry their token as `?token=`.

/** The spans' attributes the OTLP/JSON exports carried, by `url.path`. */
const exported: Array<Record<string, unknown>> = [];
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as {
      resourceSpans?: Array<{
        scopeSpans?: Array<{ spans?: Array<{ attributes?: Array<{ key: string; value: Record<string, unknown> }> }> }>;
      }>;
    };
    for (const resource of body.resourceSpans ?? [])
      for (const scope of resource.scopeSpans ?? [])
        for (const span of scope.spans ?? [])
          exported.push(Object.fromEntries((span.attributes ?? []).map(({ key, value }) => [key, Object.values(value)[0]])));
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
const listen = (server: Server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
let child: ChildProcess;
let port: number;

// The traced process: kit's tracing (built), then an http server answering every request.
const program = `
const { initTracing, startProxySpan } = require(${JSON.stringify(join(__dirname, '..', 'dist', 'entries', 'tracing.js'))});
initTracing('kit-query-redaction', process.env, { undiciSpans: false });
// Under /proxy/, the request is "proxied" as the gateway does: its client span by startProxySpan.
const server = require('node:http').createServer((req, res) => {
  if (req.url.startsWith('/proxy/')) startProxySpan('GET', new URL('http://wallet.internal:8081'), req.url.slice('/proxy'.length), {})(200);
  res.writeHead(200).end('ok');
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

beforeAll(async () => {
  await listen(receiver);
  child = spawn(process.execPath, ['-e', program], {
    env: {
      PATH: process.env.PATH,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_TRACES_SAMPLER: 'always_on',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (line: Buffer) => resolve(Number(line.toString().trim())));
    child.once('exit', (code) => reject(new Error(`the traced process exited (${code})`)));
  });
});

afterAll(async () => {
  child?.kill();
  await new Promise((resolve) => receiver.close(resolve));
});

test('an exported server span records the query with the token, code and key values redacted, the other parameters kept', async () => {
  const path = '/wallets/checkout/ref-1';
  const query = 'token=tok-secret-1&code=code-secret-2&api_key=key-secret-3&page=2';
  expect((await fetch(`http://127.0.0.1:${port}${path}?${query}`)).status).toBe(200);
  const span = await waitFor(async () => exported.find((attributes) => attributes['url.path'] === path), { what: 'the exported span' });
  expect(JSON.stringify(span)).not.toMatch(/secret/);
  expect(span!['url.query']).toBe('token=REDACTED&code=REDACTED&api_key=REDACTED&page=2');
});

test("a proxied call's client span (the gateway's startProxySpan) records url.full with the same values redacted", async () => {
  const path = '/wallets/checkout/ref-2';
  const query = 'token=tok-secret-4&page=3&X-Amz-Signature=sig-secret-5';
  expect((await fetch(`http://127.0.0.1:${port}/proxy${path}?${query}`)).status).toBe(200);
  const span = await waitFor(async () => exported.find((attributes) => attributes['url.path'] === path), {
    what: 'the exported client span',
  });
  expect(JSON.stringify(span)).not.toMatch(/secret/);
  expect(span!['url.full']).toBe(`http://wallet.internal:8081${path}?token=REDACTED&page=3&X-Amz-Signature=REDACTED`);
});

test('names the instrumentation does not list (any *token or *secret, any case) are redacted by the same rule as the logs', async () => {
  const path = '/wallets/checkout/ref-3';
  const query = 'reset_token=hidden-6&Password=hidden-7&q=shoes';
  expect((await fetch(`http://127.0.0.1:${port}${path}?${query}`)).status).toBe(200);
  const span = await waitFor(async () => exported.find((attributes) => attributes['url.path'] === path), { what: 'the exported span' });
  expect(JSON.stringify(span)).not.toMatch(/hidden/);
  expect(span!['url.query']).toBe('reset_token=REDACTED&Password=REDACTED&q=shoes');

  const proxied = '/wallets/checkout/ref-4';
  expect((await fetch(`http://127.0.0.1:${port}/proxy${proxied}?Client_Secret=hidden-8&page=4`)).status).toBe(200);
  const client = await waitFor(async () => exported.find((attributes) => attributes['url.path'] === proxied), {
    what: 'the exported client span',
  });
  expect(client!['url.full']).toBe(`http://wallet.internal:8081${proxied}?Client_Secret=REDACTED&page=4`);
});
