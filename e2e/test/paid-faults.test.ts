import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { apiOf, book, checkWallets, dayFromNow, fundedBuyer, loginAdmin, offerConsultation, register, slotsOf, waitFor } from './fixtures';
import { startSystem, type System } from './system';

/**
 * Between consultation and the wallet: passes the hold on, and — while `killOnHold` is set —
 * lets the wallet hold, then SIGKILLs consultation before it can hear the answer and confirm.
 */
let system: System;
let proxy: Server;
let killOnHold = true;
const holdsSeen: string[] = [];

function startProxy(): Promise<Server> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', async () => {
      const answer = await fetch(`${system.processes.wallet.url}${req.url}`, {
        method: req.method,
        headers: { 'content-type': 'application/json', 'x-internal-token': String(req.headers['x-internal-token'] ?? '') },
        body: body || undefined,
      });
      const text = await answer.text();
      if (req.url === '/internal/holds') holdsSeen.push(text);
      if (killOnHold && req.url === '/internal/holds') {
        await system.processes.consultation.kill('SIGKILL');
        res.destroy();
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  proxy = await startProxy();
  system = await startSystem({ envOf: { consultation: { WALLET_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` } } });
}, 120_000);
afterAll(async () => {
  await system?.stop();
  proxy.closeAllConnections();
  await new Promise((resolve) => proxy.close(resolve));
});

test('consultation SIGKILLed between the wallet’s hold and its confirm: after a restart the booking is Confirmed, held once', async () => {
  const admin = await loginAdmin(system);
  const seller = await register(system, 'seller');
  const buyer = await fundedBuyer(system, 300);
  const offer = await offerConsultation(system, seller, admin, { priceMajor: 120 });
  const slot = slotsOf(offer, dayFromNow(3))[4]!;

  const lost = await book(system, buyer, offer, slot); // the service dies with the request
  expect(lost.status).toBeGreaterThanOrEqual(500);
  expect(holdsSeen).toHaveLength(1);
  expect(JSON.parse(holdsSeen[0]!).data.status).toBe('Held');
  await waitFor(
    'consultation gone',
    async () => system.processes.consultation.running(),
    (running) => !running,
  );
  const walletOf = () => apiOf(system, buyer)('GET', '/v1/wallet');
  expect((await walletOf()).body.data).toMatchObject({ etbAvailableBalance: 180, heldBalance: 120 });

  killOnHold = false;
  await system.processes.consultation.start();
  // The restarted service's sweep asks the wallet again (idempotent) and confirms.
  const listed = await waitFor(
    'booking confirmed by the sweep',
    () => apiOf(system, buyer)('GET', '/consultations/bookings'),
    (res) => res.body.data?.bookings?.[0]?.status === 'Confirmed',
    60_000,
  );
  expect(listed.body.data.bookings).toHaveLength(1);
  expect((await walletOf()).body.data).toMatchObject({ etbAvailableBalance: 180, heldBalance: 120 });

  // And its money still moves once: cancelled by the seller, refunded in full.
  const id = listed.body.data.bookings[0].id;
  expect((await apiOf(system, seller)('POST', '/consultations/bookings/cancel', { bookingId: id })).body.data.refundAmount).toBe(120);
  await waitFor('refund', walletOf, (res) => res.body.data.etbAvailableBalance === 300, 30_000);
  expect((await walletOf()).body.data).toMatchObject({ etbAvailableBalance: 300, heldBalance: 0 });
  const check = await checkWallets(system);
  expect(check.mismatched).toEqual([]);
  expect(check.availableMinor + check.heldMinor).toBe(check.completedTopUpsMinor - check.settledPayoutsMinor);
}, 180_000);
