import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import pino from 'pino';
import { WalletClient } from '../src/payments/wallet.client';

/**
 * The hold call on its kept-alive pool: connections are reused, and a reused one the
 * wallet drops without answering is asked again once on a new connection (the hold is idempotent).
 */
const hold = {
  bookingId: 'bk_1',
  buyerId: 'b',
  buyerRef: 'MKT-USR-1',
  sellerId: 's',
  amountMinor: 1000,
  currency: 'ETB',
  endsAt: '2030-01-01T10:05:00.000Z',
  consultationId: 'con_k2j4h6g8f0d2s4a6',
};

let server: Server;
let client: WalletClient;
const sockets = new Set<Socket>();
let requests: Array<{ socket: Socket; n: number }> = [];
/** Whether the wallet drops the second request it gets on one connection. */
let dropSecondOnSocket = false;

beforeAll(async () => {
  const perSocket = new Map<Socket, number>();
  server = createServer((req, res) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    requests.push({ socket: req.socket, n });
    req.resume();
    req.on('end', () => {
      if (dropSecondOnSocket && n === 2) return void req.socket.destroy();
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success: true, data: { status: 'Held', settlement: null } }));
    });
  });
  server.on('connection', (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = new WalletClient({ url, token: 't', timeoutMs: 2_000 }, pino({ level: 'silent' }));
});
afterAll(async () => {
  client.close();
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  requests = [];
});

test('holds one after another share one kept-alive connection', async () => {
  dropSecondOnSocket = false;
  for (let i = 0; i < 3; i += 1) expect(await client.hold(hold, 'c')).toBe('held');
  expect(new Set(requests.map((r) => r.socket)).size).toBe(1);
});

test('a reused connection the wallet drops is asked again once, on a new one', async () => {
  client.close(); // a fresh pool: the next hold opens a connection, the one after reuses it
  dropSecondOnSocket = true;
  expect(await client.hold(hold, 'c')).toBe('held');
  expect(await client.hold(hold, 'c')).toBe('held');
  expect(requests.map((r) => r.n)).toEqual([1, 2, 1]);
  expect(requests[2]!.socket).not.toBe(requests[1]!.socket);
});
