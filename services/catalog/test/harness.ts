import mongoose from 'mongoose';
import pino from 'pino';
import { newReference, newUuid } from '@mkt/contracts';
import { startComponent, stopRuntime, type StartedRuntime } from '@mkt/kit';
import { makeKeyPair, signTestToken, testServers, uniqueName, type TestUser } from '@mkt/infra';
import { catalogService } from '../src/composition';
import { loadConfig } from '../src/config';

const keys = makeKeyPair();

/** The catalog as main.ts composes it, for one test file, against the real servers. */
export function useCatalog(): () => string {
  let started: StartedRuntime;
  beforeAll(async () => {
    const { mongoUrl, amqpUrl } = testServers();
    const config = loadConfig({ MONGO_URL: mongoUrl, AMQP_URL: amqpUrl, JWT_PUBLIC_KEY: keys.publicKey, PORT: '0' });
    started = await startComponent(catalogService(config, pino({ level: 'silent' })), uniqueName('catalog'));
  });
  afterAll(async () => {
    await stopRuntime(started);
    await mongoose.disconnect();
  });
  return () => started.url;
}

export function newUser(role: TestUser['role'] = 'seller'): TestUser {
  return { id: newUuid(), ref: newReference('USR'), role };
}

export const tokenOf = (user: TestUser) => signTestToken(keys.privateKey, user);

export { call } from '@mkt/infra';
