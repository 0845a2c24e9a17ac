import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startDisposableMongo, type LocalServer } from '@mkt/infra';
import { apiOf, register, report, waitFor } from './fixtures';
import { startSystem, type ProcessName, type System } from './system';

// The database server restarted under a running system: every service's `/readyz` fails (the
// gateway's stays 200: its readiness is its own, the database only reported), then recovers,
// and requests succeed again without restarting any service. The shared test server keeps its
// data in memory, so this test runs a server of its own on a file, restarted on the same port.

let dir: string;
let port: number;
let mongo: LocalServer | null = null;
let system: System;

const startMongo = (): Promise<LocalServer> => startDisposableMongo({ kind: 'file', path: join(dir, 'mongo.h2') }, port);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'e2e-mongo-restart-'));
  port = await freePort();
  mongo = await startMongo();
  system = await startSystem({ mongoUrl: mongo.url });
}, 120_000);
afterAll(async () => {
  await system?.stop();
  await mongo?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

const NAMES: ProcessName[] = ['wallet', 'catalog', 'crm', 'consultation', 'review'];
const readiness = () =>
  Promise.all(NAMES.map(async (name) => (await fetch(`${system.processes[name].url}/readyz`).catch(() => null))?.status ?? 0));
const gatewayReadiness = async () => {
  const res = await fetch(`${system.processes.gateway.url}/readyz`);
  return { status: res.status, mongo: ((await res.json()) as { data?: { checks?: { mongo?: string } } }).data?.checks?.mongo };
};

const product = (name: string) => ({
  name,
  description: 'Roasted',
  sellingPrice: 10,
  stock: 5,
  shippingHandler: 'Seller',
  categoryId: 'MKT-CAT-GROCERY0',
  properties: [{ propertyId: 'MKT-PRO-GRORGANC', value: true }],
});

test('a database restart makes /readyz fail, then every service recovers by itself', async () => {
  const seller = await register(system, 'seller');
  expect((await apiOf(system, seller)('POST', '/physical-products/seller-products/', product('Before the restart'))).status).toBe(200);
  expect(await readiness()).toEqual(NAMES.map(() => 200));

  await mongo!.stop();
  mongo = null;
  const down = await waitFor('every /readyz to fail', readiness, (statuses) => statuses.every((status) => status === 503), 60_000);
  expect(await waitFor('the gateway to report its database down', gatewayReadiness, (r) => r.mongo === 'down', 30_000)).toEqual({
    status: 200,
    mongo: 'down',
  });
  const duringOutage = await apiOf(system, seller)('GET', '/physical-products/seller-products/my');
  expect(duringOutage.status).toBeGreaterThanOrEqual(500);
  expect(duringOutage.body).toMatchObject({ success: false });

  mongo = await startMongo();
  const up = await waitFor('every /readyz to recover', readiness, (statuses) => statuses.every((status) => status === 200), 90_000);

  const again = await apiOf(system)('POST', '/v1/auth/login', { email: seller.email, password: 'a long password' });
  expect(again.status).toBe(200);
  const buyer = await register(system, 'buyer');
  const created = await apiOf(system, seller)('POST', '/physical-products/seller-products/', product('After the restart'));
  expect(created.status).toBe(200);
  const mine = await apiOf(system, seller)('GET', '/physical-products/seller-products/my');
  expect(mine.body.data.map((p: { name: string }) => p.name).sort()).toEqual(['After the restart', 'Before the restart']);
  expect((await apiOf(system, buyer)('GET', '/v1/wallet')).status).toBe(200);
  expect((await apiOf(system, seller)('GET', `/customers/seller/${seller.id}`)).status).toBe(200);
  expect((await apiOf(system, seller)('GET', '/consultations/availability-rule-sets/rule-sets')).status).toBe(200);
  expect((await apiOf(system, buyer)('GET', `/reviews/consultation/con_x/status`)).status).toBeLessThan(500);
  report('database restart', {
    readyzFailed: down.filter((status) => status === 503).length,
    readyzRecovered: up.filter((status) => status === 200).length,
    outageStatus: duringOutage.status,
    requestsAfter: 7,
    servicesRestarted: 0,
  });
}, 240_000);
