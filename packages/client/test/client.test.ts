import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, MarketplaceClient, accessTokenExpired, type Tokens } from '@mkt/client';

/**
 * The hand-written layer against a local HTTP server of the test's own (real HTTP, no mocked
 * fetch): a gateway stand-in that issues access tokens (JWT-shaped, `exp` in seconds) and
 * rotating refresh tokens, and records what it was sent.
 */
const jwt = (name: string, expSeconds: number) =>
  `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: name, exp: expSeconds })).toString('base64url')}.sig`;
const now = () => Math.floor(Date.now() / 1000);

interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

class Stand {
  server!: Server;
  base = '';
  seen: Seen[] = [];
  /** The access token the server accepts now, and the refresh token it rotates next. */
  validAccess = jwt('u1', now() + 900);
  refreshToken = 'rt-1';
  refreshes = 0;
  refuseRefresh = false;
  /** While set, refreshes wait for it. */
  refreshGate: Promise<void> | undefined;
  /** Extra routes of a test: answer and return true, or return false. */
  route: (req: Seen, res: ServerResponse) => boolean = () => false;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://x');
        const seen = { method: req.method ?? '', path: `${url.pathname}${url.search}`, headers: req.headers, body };
        this.seen.push(seen);
        this.handle(seen, url, res);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private handle(seen: Seen, url: URL, res: ServerResponse): void {
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const unauthenticated = () =>
      json(401, {
        success: false,
        message: 'The access token has expired',
        errors: [{ path: '', code: 'unauthenticated', message: 'no' }],
      });
    if (seen.method === 'POST' && url.pathname === '/v1/auth/refresh') {
      if (this.refreshGate) {
        const gate = this.refreshGate;
        this.refreshGate = undefined;
        void gate.then(() => this.handle(seen, url, res));
        return;
      }
      this.refreshes += 1;
      const { refreshToken } = JSON.parse(seen.body) as { refreshToken: string };
      if (this.refuseRefresh || refreshToken !== this.refreshToken) return unauthenticated();
      // Rotation: the old refresh token is spent, the answer carries the next one.
      this.refreshToken = `rt-${this.refreshes + 1}`;
      this.validAccess = jwt('u1', now() + 900 + this.refreshes);
      return json(200, {
        success: true,
        data: { accessToken: this.validAccess, refreshToken: this.refreshToken, tokenType: 'Bearer', expiresIn: 900 },
      });
    }
    if (this.route(seen, res)) return;
    if (seen.headers.authorization !== `Bearer ${this.validAccess}`) return unauthenticated();
    json(200, { success: true, data: { path: url.pathname, idempotencyKey: seen.headers['idempotency-key'] ?? null } });
  }
}

let stand: Stand;
beforeEach(async () => {
  stand = new Stand();
  await stand.start();
});
afterEach(() => stand.stop());

const expired = () => jwt('u1', now() - 5);

describe('token refresh with refresh-token rotation', () => {
  test('concurrent calls with an expired access token share one refresh, each is retried once, the rotated pair replaces the old', async () => {
    const heard: Array<Tokens | undefined> = [];
    const client = new MarketplaceClient({
      baseUrl: stand.base,
      tokens: { accessToken: expired(), refreshToken: 'rt-1' },
      onTokens: (t) => heard.push(t),
    });
    const answers = await Promise.all(Array.from({ length: 5 }, () => client.ok(client.api.GET('/v1/wallet'))));
    expect(answers.map((a) => (a.data as unknown as { path: string }).path)).toEqual(Array(5).fill('/v1/wallet'));
    expect(stand.refreshes).toBe(1);
    expect(client.tokens).toEqual({ accessToken: stand.validAccess, refreshToken: 'rt-2' });
    expect(heard).toEqual([{ accessToken: stand.validAccess, refreshToken: 'rt-2' }]);
    // 5 refused, 1 refresh, 5 retried
    expect(stand.seen.filter((s) => s.path === '/v1/wallet')).toHaveLength(10);
    // The refresh never carries the expired bearer.
    expect(stand.seen.find((s) => s.path === '/v1/auth/refresh')?.headers.authorization).toBeUndefined();

    // The next expiry refreshes with the rotated token, not the spent one.
    stand.validAccess = jwt('u1', now() + 900);
    client.setTokens({ accessToken: expired(), refreshToken: client.tokens!.refreshToken });
    await client.ok(client.api.GET('/v1/wallet'));
    expect(stand.refreshes).toBe(2);
    expect(JSON.parse(stand.seen.filter((s) => s.path === '/v1/auth/refresh')[1]!.body)).toEqual({ refreshToken: 'rt-2' });
  });

  test('a 401 of an access token that has not expired is answered as it is: no refresh', async () => {
    // Not the token the server accepts (another user's), but not expired either.
    const client = new MarketplaceClient({ baseUrl: stand.base, tokens: { accessToken: jwt('u2', now() + 900), refreshToken: 'rt-1' } });
    const error = await client.ok(client.api.GET('/v1/wallet')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(401);
    expect(stand.refreshes).toBe(0);
  });

  test('a refused refresh answers the original 401 once, and forgets the pair', async () => {
    stand.refuseRefresh = true;
    const heard: Array<Tokens | undefined> = [];
    const client = new MarketplaceClient({
      baseUrl: stand.base,
      tokens: { accessToken: expired(), refreshToken: 'rt-1' },
      onTokens: (t) => heard.push(t),
    });
    const error = (await client.ok(client.api.GET('/v1/wallet')).catch((e: unknown) => e)) as ApiError;
    expect(error.status).toBe(401);
    expect(error.code).toBe('unauthenticated');
    expect(stand.refreshes).toBe(1);
    expect(stand.seen.filter((s) => s.path === '/v1/wallet')).toHaveLength(1);
    expect(client.tokens).toBeUndefined();
    expect(heard).toEqual([undefined]);
  });

  test('a 401 of one user answered after another signed in is not retried as the other user, nor refreshed', async () => {
    const first = expired();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    stand.route = (seen, res) => {
      if (seen.path !== '/v1/wallet' || seen.headers.authorization !== `Bearer ${first}`) return false;
      arrived();
      void gate.then(() => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ success: false, message: 'expired', errors: [{ path: '', code: 'unauthenticated', message: 'no' }] }));
      });
      return true;
    };
    const client = new MarketplaceClient({ baseUrl: stand.base, tokens: { accessToken: first, refreshToken: 'rt-1' } });
    // (A transfer would be the costly case: retried with the other user's bearer, it moved their money.)
    const call = client.ok(client.api.GET('/v1/wallet')).catch((e: unknown) => e);
    await reached;
    client.setTokens({ accessToken: stand.validAccess, refreshToken: 'rt-other' }); // another user signs in
    release();
    expect(((await call) as ApiError).status).toBe(401);
    expect(stand.refreshes).toBe(0);
    expect(stand.seen.filter((s) => s.headers.authorization === `Bearer ${stand.validAccess}`)).toHaveLength(0);
    expect(client.tokens).toEqual({ accessToken: stand.validAccess, refreshToken: 'rt-other' });
  });

  test('a sign-out while a refresh is under way: the refreshed pair is not kept, the call answers its 401', async () => {
    let release!: () => void;
    stand.refreshGate = new Promise<void>((resolve) => (release = resolve));
    const client = new MarketplaceClient({ baseUrl: stand.base, tokens: { accessToken: expired(), refreshToken: 'rt-1' } });
    const call = client.ok(client.api.GET('/v1/wallet')).catch((e: unknown) => e);
    while (!stand.seen.some((s) => s.path === '/v1/auth/refresh')) await new Promise((resolve) => setTimeout(resolve, 5));
    client.setTokens(undefined); // signed out
    release();
    expect(((await call) as ApiError).status).toBe(401);
    expect(stand.refreshes).toBe(1);
    expect(client.tokens).toBeUndefined();
    expect(stand.seen.filter((s) => s.path === '/v1/wallet')).toHaveLength(1);
  });

  test('refresh() rotates on demand; expiry is read from the token with a leeway', async () => {
    const client = new MarketplaceClient({ baseUrl: stand.base, tokens: { accessToken: jwt('u1', now() + 900), refreshToken: 'rt-1' } });
    const tokens = await client.refresh();
    expect(tokens).toEqual({ accessToken: stand.validAccess, refreshToken: 'rt-2' });
    expect(client.tokens).toEqual(tokens);
    expect(accessTokenExpired(jwt('u', now() + 30))).toBe(true);
    expect(accessTokenExpired(jwt('u', now() + 30), 0)).toBe(false);
    expect(accessTokenExpired('not a jwt')).toBe(false);
  });
});

describe('Idempotency-Key', () => {
  const topup = (client: MarketplaceClient, key?: string) =>
    client.ok(
      client.api.POST('/wallets/users/{userReferenceId}/topup', {
        params: { path: { userReferenceId: 'MKT-USR-ABCDEFGH' }, ...(key ? { header: { 'Idempotency-Key': key } } : {}) },
        body: { amount: 100, paymentMethod: 'Chapa', redirectUrl: 'http://localhost/done' },
      }),
    );

  test('a fresh key on each call of an operation that takes one, the given key kept, none on the others', async () => {
    const client = new MarketplaceClient({ baseUrl: stand.base, tokens: { accessToken: stand.validAccess, refreshToken: 'rt-1' } });
    await topup(client);
    await topup(client);
    await topup(client, 'my-key-1');
    await client.ok(client.api.GET('/v1/wallet'));
    const keys = stand.seen.map((s) => s.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[0]).not.toBe(keys[1]);
    expect(keys[2]).toBe('my-key-1');
    expect(keys[3]).toBeUndefined();
  });

  test('the retry after a refresh sends the same key (the call is one operation)', async () => {
    const client = new MarketplaceClient({
      baseUrl: stand.base,
      tokens: { accessToken: expired(), refreshToken: 'rt-1' },
      idempotencyKey: () => 'k-42',
    });
    await topup(client);
    const sent = stand.seen.filter((s) => s.path.endsWith('/topup'));
    expect(sent).toHaveLength(2);
    expect(sent.map((s) => s.headers['idempotency-key'])).toEqual(['k-42', 'k-42']);
    expect(sent[0]!.body).toBe(sent[1]!.body);
  });
});

describe('the error class', () => {
  test('carries the envelope, the status and the request id', async () => {
    stand.route = (seen, res) => {
      if (!seen.path.startsWith('/consultations/bookings')) return false;
      res.writeHead(422, { 'content-type': 'application/json', 'x-request-id': 'req-123' });
      res.end(
        JSON.stringify({
          success: false,
          message: 'The slot is taken',
          errors: [
            { path: 'startTime', code: 'slot_unavailable', message: 'The slot is taken' },
            { path: 'date', code: 'invalid', message: 'x' },
          ],
        }),
      );
      return true;
    };
    const client = new MarketplaceClient({ baseUrl: stand.base });
    const error = (await client
      .ok(client.api.GET('/consultations/bookings', { params: { query: { page: 1 } } }))
      .catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 422,
      code: 'slot_unavailable',
      message: 'The slot is taken',
      requestId: 'req-123',
    });
    expect(String(error)).toBe('ApiError: GET /consultations/bookings → 422 slot_unavailable: The slot is taken (request req-123)');
    expect(error.details).toHaveLength(2);
    expect(error.operation).toBe('GET /consultations/bookings');
  });

  test('a body that is not the envelope still gives status and an http_ code', async () => {
    stand.route = (_seen, res) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('Bad Gateway');
      return true;
    };
    const client = new MarketplaceClient({ baseUrl: stand.base });
    const error = (await client.ok(client.api.GET('/wallets/banks')).catch((e: unknown) => e)) as ApiError;
    expect(error).toMatchObject({ status: 502, code: 'http_502', details: [], requestId: undefined });
  });
});

describe('pagination', () => {
  const records = Array.from({ length: 5 }, (_, i) => ({ id: `c${i + 1}` }));
  const pageOf = (url: URL) => {
    const page = Number(url.searchParams.get('page'));
    const limit = Number(url.searchParams.get('limit'));
    return { page, limit, slice: records.slice((page - 1) * limit, page * limit) };
  };

  test('pages follow `pagination` inside `data` until the total; items flattens them; the filters are kept', async () => {
    stand.route = (seen, res) => {
      const url = new URL(seen.path, 'http://x');
      if (url.pathname !== '/customers') return false;
      const { page, limit, slice } = pageOf(url);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: true, data: { customers: slice, pagination: { page, limit, total: records.length } } }));
      return true;
    };
    const client = new MarketplaceClient({ baseUrl: stand.base });
    const pages = [];
    for await (const page of client.pages('/customers', { query: { status: 'Active' } }, { limit: 2 })) pages.push(page);
    expect(pages.map((p) => [p.page, p.items.length, p.total])).toEqual([
      [1, 2, 5],
      [2, 2, 5],
      [3, 1, 5],
    ]);
    expect(stand.seen.map((s) => s.path)).toEqual([
      '/customers?status=Active&page=1&limit=2',
      '/customers?status=Active&page=2&limit=2',
      '/customers?status=Active&page=3&limit=2',
    ]);
    const ids = [];
    for await (const item of client.items('/customers', {}, { limit: 3 })) ids.push((item as { id: string }).id);
    expect(ids).toEqual(['c1', 'c2', 'c3', 'c4', 'c5']);
  });

  test('`data` as the array with `pagination` beside it; an empty page ends the listing', async () => {
    stand.route = (seen, res) => {
      const url = new URL(seen.path, 'http://x');
      if (url.pathname !== '/consultations/availability-rule-sets/rule-sets') return false;
      const { page, limit, slice } = pageOf(url);
      res.writeHead(200, { 'content-type': 'application/json' });
      // A total that overstates: the empty page ends it anyway.
      res.end(JSON.stringify({ success: true, data: slice, pagination: { page, limit, total: 99 } }));
      return true;
    };
    const client = new MarketplaceClient({ baseUrl: stand.base });
    const ids = [];
    for await (const item of client.items('/consultations/availability-rule-sets/rule-sets', {}, { limit: 4 }))
      ids.push((item as { id: string }).id);
    expect(ids).toEqual(['c1', 'c2', 'c3', 'c4', 'c5']);
    expect(stand.seen).toHaveLength(3);
  });

  test('a failed page throws ApiError', async () => {
    const client = new MarketplaceClient({ baseUrl: stand.base });
    const pages = client.pages('/v1/products');
    await expect(pages.next()).rejects.toMatchObject({ status: 401, code: 'unauthenticated' });
  });
});

describe('the sandbox checkout', () => {
  const routeCheckout = (paidStatus: string) => (seen: Seen, res: ServerResponse) => {
    const url = new URL(seen.path, 'http://x');
    if (seen.method === 'GET' && url.pathname === '/wallets/checkout/MKT-TOP-UP-1') {
      const ok = url.searchParams.get('token') === 't0k';
      res.writeHead(ok ? 200 : 404, { 'content-type': 'text/html' });
      res.end('<form method="post" action="/wallets/checkout/MKT-TOP-UP-1/pay"></form>');
      return true;
    }
    if (seen.method === 'POST' && url.pathname === '/wallets/checkout/MKT-TOP-UP-1/pay') {
      if (seen.body !== 'token=t0k' || seen.headers['content-type'] !== 'application/x-www-form-urlencoded') return false;
      res.writeHead(303, { location: `http://localhost:3000/done?status=${paidStatus}` });
      res.end('See Other');
      return true;
    }
    if (seen.method === 'POST' && url.pathname === '/wallets/checkout/MKT-TOP-UP-1/cancel') {
      res.writeHead(303, { location: 'http://localhost:3000/done?status=Cancelled' });
      res.end();
      return true;
    }
    return false;
  };

  test('opens the checkout page of the paymentUrl on the client’s gateway, submits Pay, answers the status', async () => {
    stand.route = routeCheckout('Completed');
    const client = new MarketplaceClient({ baseUrl: stand.base });
    // The paymentUrl names the public URL; the page is opened on this client's gateway.
    const outcome = await client.payInSandbox('https://pay.example.com/wallets/checkout/MKT-TOP-UP-1?token=t0k');
    expect(outcome).toEqual({ status: 'Completed', location: 'http://localhost:3000/done?status=Completed' });
    expect(stand.seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      'GET /wallets/checkout/MKT-TOP-UP-1?token=t0k',
      'POST /wallets/checkout/MKT-TOP-UP-1/pay',
    ]);
    await expect(client.sandboxCheckout(`${stand.base}/wallets/checkout/MKT-TOP-UP-1?token=t0k`, 'cancel')).resolves.toMatchObject({
      status: 'Cancelled',
    });
  });

  test('a payment that does not complete, or a page that is not there, throws', async () => {
    stand.route = routeCheckout('Failed');
    const client = new MarketplaceClient({ baseUrl: stand.base });
    await expect(client.payInSandbox(`${stand.base}/wallets/checkout/MKT-TOP-UP-1?token=t0k`)).rejects.toThrow(/did not complete/);
    await expect(client.payInSandbox(`${stand.base}/wallets/checkout/MKT-TOP-UP-1?token=wrong`)).rejects.toMatchObject({ status: 404 });
  });
});
