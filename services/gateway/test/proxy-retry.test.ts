import http, { type Server } from 'node:http';
import type { Socket } from 'node:net';
import { disconnectDatabase, startGateway, startUpstream, urlOf, type Gateway } from './harness';

/**
 * A service that hangs up on the second request of every connection, without an answer: what a
 * pooled socket looks like when the service closed it (shutting down, or its idle timeout won)
 * just as the gateway sent on it.
 */
function startHangingUpService(): Promise<{ server: Server; requests: () => number; hangUpNext: (n: number) => void }> {
  const seen = new WeakMap<Socket, number>();
  let requests = 0;
  // Besides: the next `hangUps` requests, whatever their socket, get no answer either.
  let hangUps = 0;
  const server = http.createServer((req, res) => {
    requests += 1;
    const n = (seen.get(req.socket) ?? 0) + 1;
    seen.set(req.socket, n);
    req.resume();
    req.on('end', () => {
      if (hangUps > 0) {
        hangUps -= 1;
        return req.socket.destroy();
      }
      if (n >= 2) return req.socket.destroy();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: true, data: { method: req.method } }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, requests: () => requests, hangUpNext: (n) => (hangUps = n) })),
  );
}

let service: Awaited<ReturnType<typeof startHangingUpService>>;
let others: Server[];
let gateway: Gateway;

beforeAll(async () => {
  service = await startHangingUpService();
  others = await Promise.all(['wallet', 'catalog', 'crm', 'consultation'].map((name) => startUpstream(name)));
  const [wallet, catalog, crm, consultation] = others.map(urlOf);
  gateway = await startGateway({
    WALLET_URL: wallet!,
    CATALOG_URL: catalog!,
    CRM_URL: crm!,
    CONSULTATION_URL: consultation!,
    REVIEW_URL: urlOf(service.server),
    RATE_LIMIT_IP_PER_MIN: '0',
    RATE_LIMIT_USER_PER_MIN: '0',
    // A resent request whose body is gone would wait this long for it (a 504, not a 502).
    UPSTREAM_TIMEOUT_MS: '5000',
  });
});
afterAll(async () => {
  await gateway.close();
  await Promise.all([service.server, ...others].map((server) => new Promise((resolve) => server.close(resolve))));
  await disconnectDatabase();
});

describe('a pooled socket the service hung up on', () => {
  test('an idempotent request is sent again on a new socket, once, and answered', async () => {
    for (let i = 0; i < 5; i += 1) {
      const res = await fetch(`${gateway.url}/reviews/by-entity?n=${i}`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: unknown }).data).toEqual({ method: 'GET' });
    }
    // Every request after the first met a hung-up socket, then a fresh one.
    expect(service.requests()).toBe(1 + 2 * 4);
  });

  test('a POST is not sent twice: the gateway answers 502', async () => {
    await fetch(`${gateway.url}/reviews/by-entity?warm=1`); // leaves a used socket in the pool
    const before = service.requests();
    const res = await fetch(`${gateway.url}/reviews`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ success: false, errors: [{ code: 'bad_gateway' }] });
    expect(service.requests() - before).toBe(1);
  });

  test('a PUT with a body is not sent again (its body was streamed and is gone): 502, not a 504 after the timeout', async () => {
    await fetch(`${gateway.url}/reviews/by-entity?warm=2`);
    const before = service.requests();
    const res = await fetch(`${gateway.url}/reviews/r1`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rating: 4 }),
    });
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({ success: false, errors: [{ code: 'bad_gateway' }] });
    expect(service.requests() - before).toBe(1);
  });

  test('a DELETE without a body is sent again, once, and answered', async () => {
    await fetch(`${gateway.url}/reviews/by-entity?warm=3`);
    const before = service.requests();
    const res = await fetch(`${gateway.url}/reviews/r1`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: unknown }).data).toEqual({ method: 'DELETE' });
    expect(service.requests() - before).toBe(2);
  });

  test('two sockets hung up in a row: sent a third time and answered; a third hang-up answers 502 (at most twice again)', async () => {
    await fetch(`${gateway.url}/reviews/by-entity?warm=4`);
    let before = service.requests();
    service.hangUpNext(2);
    const twice = await fetch(`${gateway.url}/reviews/by-entity?twice=1`);
    expect(twice.status).toBe(200);
    expect(service.requests() - before).toBe(3);

    before = service.requests();
    service.hangUpNext(3);
    const thrice = await fetch(`${gateway.url}/reviews/by-entity?thrice=1`);
    expect(thrice.status).toBe(502);
    expect(await thrice.json()).toMatchObject({ success: false, errors: [{ code: 'bad_gateway' }] });
    expect(service.requests() - before).toBe(3);
  });
});
