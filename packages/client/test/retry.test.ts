import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, MarketplaceClient, backoffMs, retryAfterMs, type MarketplaceClientOptions } from '@mkt/client';
import { randomUuid } from '../src/retry';

/**
 * The retry rules against a local HTTP server of the test's own that fails on purpose (real HTTP,
 * no mocked fetch): each attempt is answered by the next step of a script, and every attempt is
 * recorded with the Idempotency-Key and body it carried.
 */
interface Attempt {
  method: string;
  path: string;
  key: string | undefined;
  body: string;
  at: number;
}
type Step = (res: ServerResponse, req: IncomingMessage) => void;

const envelope = (code: string, message = code) => ({ success: false, message, errors: [{ path: '', code, message }] });
const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Step =>
  (res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
const ok = (data: unknown = { id: 'done' }) => json(200, { success: true, message: 'ok', data });
const fail = (status: number, code: string, headers: Record<string, string> = {}) => json(status, envelope(code), headers);
/** The connection is cut before any answer: a network failure for the client. */
const cut: Step = (_res, req) => req.socket.destroy();
const slow =
  (ms: number, then: Step): Step =>
  (res, req) =>
    void setTimeout(() => then(res, req), ms);

let server: Server;
let base = '';
let script: Step[] = [];
let attempts: Attempt[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const header = req.headers['idempotency-key'];
      attempts.push({
        method: req.method ?? '',
        path: req.url ?? '',
        key: typeof header === 'string' ? header : undefined,
        body,
        at: Date.now(),
      });
      const step = script.shift() ?? fail(500, 'internal', {});
      step(res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  script = [];
  attempts = [];
});

/** Short backoffs so that the tests wait little; `Retry-After` still rules. */
const client = (options: Partial<MarketplaceClientOptions> = {}) =>
  new MarketplaceClient({ baseUrl: base, initialRetryDelayMs: 20, maxRetryDelayMs: 50, ...options });
const transfer = { toUserId: '3f1c2a7e-8d4b-4c1e-9a2f-5b6c7d8e9f01', amount: 12000, currency: 'ETB' as const };
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );

describe('calls safe to repeat are retried', () => {
  test('a read answered 503 then 502 is sent again until it succeeds (2 retries by default)', async () => {
    script = [fail(503, 'unavailable'), fail(502, 'bad_gateway'), ok({ etbAvailableBalance: 5 })];
    const sdk = client();
    const { data } = await sdk.ok(sdk.api.GET('/v1/wallet'));
    expect(data).toEqual({ etbAvailableBalance: 5 });
    expect(attempts.map((a) => `${a.method} ${a.path}`)).toEqual(Array(3).fill('GET /v1/wallet'));
  });

  test('past maxNetworkRetries the last answer is the call’s (its ApiError)', async () => {
    script = [fail(500, 'internal'), fail(500, 'internal'), fail(500, 'internal'), ok()];
    const sdk = client();
    const error = (await failure(sdk.ok(sdk.api.GET('/v1/wallet')))) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(500);
    expect(attempts).toHaveLength(3);
  });

  test('maxNetworkRetries: 0 sends every call once', async () => {
    script = [fail(503, 'unavailable'), ok()];
    const answer = await client({ maxNetworkRetries: 0 }).api.GET('/v1/wallet');
    expect(answer.response.status).toBe(503);
    expect(attempts).toHaveLength(1);
  });

  test('a keyed operation: 409 in progress, a cut connection, then 502, then done — every attempt with the one key and body generated for the call', async () => {
    script = [fail(409, 'conflict'), cut, fail(502, 'bad_gateway'), ok({ id: 'tr-1' })];
    const sdk = client({ maxNetworkRetries: 3 });
    const { data } = await sdk.ok(sdk.api.POST('/v1/wallet/transfers', { body: transfer }));
    expect(data).toEqual({ id: 'tr-1' });
    expect(attempts).toHaveLength(4);
    const [first] = attempts;
    expect(first!.key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    for (const attempt of attempts) {
      expect(attempt.key).toBe(first!.key);
      expect(JSON.parse(attempt.body)).toEqual(transfer);
    }
    // The next call is another operation: another key.
    script = [ok()];
    await sdk.ok(sdk.api.POST('/v1/wallet/transfers', { body: transfer }));
    expect(attempts[4]!.key).not.toBe(first!.key);
  });

  test('a key the caller gives is the one every attempt sends; idempotencyKey() is asked once per call', async () => {
    script = [fail(503, 'unavailable'), ok()];
    const given = client();
    await given.ok(given.api.POST('/v1/wallet/transfers', { body: transfer, params: { header: { 'Idempotency-Key': 'transfer-0001' } } }));
    expect(attempts.map((a) => a.key)).toEqual(['transfer-0001', 'transfer-0001']);

    attempts = [];
    script = [fail(500, 'internal'), fail(409, 'conflict'), ok()];
    let made = 0;
    const sdk = client({ idempotencyKey: () => `k-${++made}` });
    await sdk.ok(sdk.api.POST('/v1/wallet/transfers', { body: transfer }));
    expect(attempts.map((a) => a.key)).toEqual(['k-1', 'k-1', 'k-1']);
    expect(made).toBe(1);
  });

  test('429 waits the Retry-After it carries before the next attempt', async () => {
    script = [fail(429, 'rate_limited', { 'retry-after': '1' }), ok()];
    const sdk = client();
    await sdk.ok(sdk.api.GET('/v1/wallet'));
    expect(attempts).toHaveLength(2);
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(950);
  });

  test('a Retry-After longer than maxRetryAfterMs is answered as it is', async () => {
    script = [fail(429, 'rate_limited', { 'retry-after': '120' }), ok()];
    const answer = await client().api.GET('/v1/wallet');
    expect(answer.response.status).toBe(429);
    expect(attempts).toHaveLength(1);
  });

  test('an exchange over timeoutMs is sent again', async () => {
    script = [slow(1000, ok({ late: true })), ok({ late: false })];
    const sdk = client({ timeoutMs: 200 });
    const { data } = await sdk.ok(sdk.api.GET('/v1/wallet'));
    expect(data).toEqual({ late: false });
    expect(attempts).toHaveLength(2);
  });
});

describe('what is not retried', () => {
  test('an operation without an Idempotency-Key (a create that would be made twice): 503 and a cut connection are answered at once', async () => {
    script = [fail(503, 'unavailable'), ok()];
    const sdk = client();
    const body = { name: 'Lamp', description: 'A lamp', price: 10, quantity: 1, categoryId: 'c1' };
    const post = sdk.api.POST as unknown as (path: string, init: object) => Promise<{ response: Response }>;
    expect((await post('/physical-products/seller-products/', { body })).response.status).toBe(503);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.key).toBeUndefined();

    attempts = [];
    script = [cut, ok()];
    await expect(post('/physical-products/seller-products/', { body })).rejects.toThrow();
    expect(attempts).toHaveLength(1);
  });

  test('a 409 other than in progress (the key reused is answered again; invalid_state is not retried), a 400 and a 422', async () => {
    script = [fail(409, 'invalid_state'), ok()];
    expect((await client().api.POST('/v1/wallet/transfers', { body: transfer })).response.status).toBe(409);
    script = [fail(422, 'insufficient_funds'), ok()];
    expect((await client().api.POST('/v1/wallet/transfers', { body: transfer })).response.status).toBe(422);
    script = [fail(400, 'invalid'), ok()];
    expect((await client().api.GET('/v1/wallet')).response.status).toBe(400);
    script = [fail(409, 'conflict'), ok()];
    expect((await client().api.GET('/v1/wallet')).response.status).toBe(409); // a read carries no key
    expect(attempts).toHaveLength(4);
  });

  test('the caller’s abort is final', async () => {
    script = [slow(300, ok()), ok()];
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(client().api.GET('/v1/wallet', { signal: controller.signal })).rejects.toThrow();
    expect(attempts).toHaveLength(1);
  });

  test('a call whose session changed (signed out) during the backoff is not sent again', async () => {
    script = [fail(503, 'unavailable'), ok()];
    const sdk = client({ tokens: { accessToken: 'a.b.c', refreshToken: 'r' }, initialRetryDelayMs: 300, maxRetryDelayMs: 300 });
    const answer = sdk.api.GET('/v1/wallet');
    setTimeout(() => sdk.setTokens(undefined), 50);
    expect((await answer).response.status).toBe(503);
    expect(attempts).toHaveLength(1);
  });
});

describe('backoff (unit)', () => {
  const options = { initialRetryDelayMs: 500, maxRetryDelayMs: 5000 };
  test('doubles per retry up to the maximum, less up to half of it at random', () => {
    expect(backoffMs(1, options, 0, () => 0)).toBe(500);
    expect(backoffMs(2, options, 0, () => 0)).toBe(1000);
    expect(backoffMs(3, options, 0, () => 0)).toBe(2000);
    expect(backoffMs(10, options, 0, () => 0)).toBe(5000);
    expect(backoffMs(10, options, 0, () => 0.999_999)).toBeCloseTo(2500, 0);
    expect(backoffMs(1, options, 0, () => 0.999_999)).toBeCloseTo(250, 0);
    for (let i = 0; i < 100; i += 1) {
      const wait = backoffMs(3, options);
      expect(wait).toBeGreaterThanOrEqual(1000);
      expect(wait).toBeLessThanOrEqual(2000);
    }
  });
  test('a Retry-After longer than the backoff wins', () => {
    expect(backoffMs(1, options, 3000, () => 0)).toBe(3000);
    expect(backoffMs(3, options, 100, () => 0)).toBe(2000);
  });
  test('Retry-After in seconds or as an HTTP date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('soon')).toBeUndefined();
    const now = Date.parse('2026-11-26T10:00:00Z');
    expect(retryAfterMs('Thu, 26 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Thu, 26 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });
  test('the UUID fallback (no crypto.randomUUID, as in a page served over plain HTTP) is a v4 UUID', () => {
    try {
      Object.defineProperty(globalThis.crypto, 'randomUUID', { value: undefined, configurable: true });
      const ids = new Set(Array.from({ length: 50 }, () => randomUuid()));
      expect(ids.size).toBe(50);
      for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    } finally {
      delete (globalThis.crypto as { randomUUID?: unknown }).randomUUID; // the prototype's again
    }
  });
});
