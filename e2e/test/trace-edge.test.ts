import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http, { type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiOf, register, waitFor, type Session } from './fixtures';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver';
import { startSystem, type System } from './system';

/**
 * Trace context stays inside the marketplace. The system runs with tracing on, exported over
 * OTLP to a receiver in this process, every process sampling new traces at a ratio of 0, the
 * gateway at its default (the client's trace headers not trusted), and the wallet on a local
 * stand-in for Chapa that records the headers it receives. A client's `traceparent` with its
 * sampled flag set decides nothing: no span is exported, and no process logs the client's trace
 * id. The payment provider gets no `traceparent`, `tracestate` or `baggage`.
 * (traces.test.ts runs the gateway trusting its caller: there the client's trace is followed.)
 */

const SECRET_KEY = 'CHASECK_TEST-trace-edge';
const received: { chapa: IncomingHttpHeaders[] } = { chapa: [] };

/** Chapa's initialize, answered as Chapa does; every request's headers are kept. */
function startFakeChapa(): Promise<Server> {
  const server = http.createServer((req, res) => {
    received.chapa.push(req.headers);
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      const parsed = body ? (JSON.parse(body) as { tx_ref?: string }) : {};
      res.end(JSON.stringify({ status: 'success', data: { checkout_url: `https://checkout.chapa.test/${parsed.tx_ref}` } }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let receiver: OtlpReceiver;
let chapa: Server;
let system: System;
let logDir: string;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  chapa = await startFakeChapa();
  // Every process's log is kept (system.ts writes them under E2E_LOG_DIR when it is set).
  logDir = mkdtempSync(join(tmpdir(), 'trace-edge-'));
  const previous = process.env.E2E_LOG_DIR;
  process.env.E2E_LOG_DIR = logDir;
  try {
    system = await startSystem({
      env: {
        ...receiver.env,
        // Each request's log line, with its trace ids.
        LOG_LEVEL: 'info',
      },
      envOf: {
        wallet: {
          PAYMENT_PROVIDER: 'chapa',
          CHAPA_BASE_URL: `http://127.0.0.1:${(chapa.address() as AddressInfo).port}`,
          CHAPA_SECRET_KEY: SECRET_KEY,
          CHAPA_WEBHOOK_SECRET: 'whsec_trace_edge_0123456789',
        },
      },
    });
  } finally {
    if (previous === undefined) delete process.env.E2E_LOG_DIR;
    else process.env.E2E_LOG_DIR = previous;
  }
}, 120_000);
afterAll(async () => {
  await system?.stop();
  await receiver?.close();
  await new Promise((resolve) => chapa?.close(resolve));
  if (logDir) rmSync(logDir, { recursive: true, force: true });
}, 60_000);

/** A client's own trace, sampled, with state and baggage of its own. */
function clientTrace() {
  const traceId = randomBytes(16).toString('hex');
  const headers = {
    traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
    tracestate: 'client=1',
    baggage: 'tenant=outsider',
  };
  return { traceId, headers };
}

async function buyerWithWallet(): Promise<Session> {
  const buyer = await register(system, 'buyer');
  await waitFor(
    'buyer wallet',
    () => apiOf(system, buyer)('GET', '/v1/wallet'),
    (res) => res.status === 200,
  );
  return buyer;
}

/** Chapa top-up through the gateway: the wallet calls the provider for the checkout link. */
async function chapaTopUp(buyer: Session, headers: Record<string, string>) {
  const res = await apiOf(system, buyer)(
    'POST',
    `/wallets/users/${buyer.ref}/topup`,
    { amount: 50, paymentMethod: 'Chapa', redirectUrl: 'http://localhost:3000/done' },
    headers,
  );
  expect(res.status).toBe(200);
  return res;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a client’s sampled traceparent does not make the system sample: at a ratio of 0 nothing is exported and no process sees the client’s trace id', async () => {
  const buyer = await buyerWithWallet();
  const client = clientTrace();
  expect((await apiOf(system, buyer)('GET', '/v1/wallet', undefined, client.headers)).status).toBe(200);
  await chapaTopUp(buyer, client.headers);
  // Longer than the exporters' schedule (100 ms) and the gateway's log buffer (250 ms).
  await sleep(2_000);

  expect(receiver.spans).toEqual([]);
  const logs = readdirSync(logDir).map((file) => ({ file, text: readFileSync(join(logDir, file), 'utf8') }));
  expect(logs.filter(({ text }) => text.includes(client.traceId)).map(({ file }) => file)).toEqual([]);
  expect(logs.filter(({ text }) => text.includes('outsider')).map(({ file }) => file)).toEqual([]);
  // The requests were traced, in a trace the gateway started (log lines carry its ids).
  const wallet = logs.find(({ file }) => file.endsWith('-wallet.log'));
  expect(wallet?.text).toMatch(/"trace_id":"[0-9a-f]{32}"/);
}, 120_000);

test('the payment provider receives no traceparent, tracestate or baggage', async () => {
  const buyer = await buyerWithWallet();
  const before = received.chapa.length;
  await chapaTopUp(buyer, clientTrace().headers);
  const calls = received.chapa.slice(before);
  expect(calls.length).toBeGreaterThan(0);
  for (const headers of calls) {
    expect(headers.authorization).toBe(`Bearer ${SECRET_KEY}`);
    expect({ traceparent: headers.traceparent, tracestate: headers.tracestate, baggage: headers.baggage }).toEqual({
      traceparent: undefined,
      tracestate: undefined,
      baggage: undefined,
    });
  }
}, 60_000);
