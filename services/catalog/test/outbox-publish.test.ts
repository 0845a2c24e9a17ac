import mongoose from 'mongoose';
import pino from 'pino';
import { startComponent, stopRuntime, type StartedRuntime } from '@mkt/kit/runtime';
import { call, listenForEvents, testEnv, testIdentity, testServers } from '@mkt/infra';
import { catalogService } from '../src/composition';
import { loadConfig } from '../src/config';
import { PHONE } from './harness';

// The repository that writes an event into a document's outbox hands it to the relay itself:
// with the relay's sweeper stopped, an admin's audited edit is still published at once.

const identity = testIdentity();
const env = testEnv('catalog_outbox');
const newUser = identity.newUser;
const tokenOf = identity.tokenOf;

let started: StartedRuntime;
beforeAll(async () => {
  const service = catalogService(loadConfig(env.serviceEnv(identity.keys.publicKey)), pino({ level: 'silent' }));
  started = await startComponent(service.definition, env.dbName);
  // No sweep from here on (neither the timer nor the one on reconnect): only the write's own announcement publishes.
  await service.definition.runtime.outbox.stop();
});
afterAll(async () => {
  await stopRuntime(started);
  await mongoose.disconnect();
});

const base = '/physical-products/seller-products';
const product = PHONE;

test('an admin’s edit is published promptly with no sweep running and no flush by the use case', async () => {
  const events = await listenForEvents(testServers().amqpUrl, env.events, ['catalog.admin_action.recorded']);
  const seller = newUser('seller');
  const admin = newUser('admin');
  const created = await call(started.url, 'POST', `${base}/`, { token: tokenOf(seller), body: product });
  const id = created.body.data.id as string;
  const edited = await call(started.url, 'PATCH', `${base}/${id}`, { token: tokenOf(admin), body: { stock: 3 } });
  expect(edited.status).toBe(200);
  const at = Date.now();
  const entry = await events.waitFor((m) => m.json.data.targetId === id, 'the edit’s audit entry');
  expect(entry.json.data).toMatchObject({ action: 'product.edit', actorId: admin.id, before: { stock: 12 }, after: { stock: 3 } });
  // Well inside the sweep's grace (3 s): it was the write's own publish.
  expect(Date.now() - at).toBeLessThan(2_500);
  await events.close();
});
