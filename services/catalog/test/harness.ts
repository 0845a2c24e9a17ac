import mongoose from 'mongoose';
import pino from 'pino';
import { newReference, newUuid } from '@mkt/contracts';
import { connectMongo, ensureIndexes } from '@mkt/kit';
import { listenOnFreePort, makeKeyPair, signTestToken, testServers, uniqueName, type TestUser } from '@mkt/infra';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { Product } from '../src/db/product.model';
import { Shop, V1Product } from '../src/db/shop.model';

const keys = makeKeyPair();

/** The catalog app for one test file, against the real database. */
export function useCatalog(): () => string {
  let url = '';
  let close: () => Promise<void>;
  beforeAll(async () => {
    const { mongoUrl, amqpUrl } = testServers();
    const log = pino({ level: 'silent' });
    await connectMongo({ url: mongoUrl, dbName: uniqueName('catalog'), log });
    await ensureIndexes([Product, Shop, V1Product]);
    const config = loadConfig({ MONGO_URL: mongoUrl, AMQP_URL: amqpUrl, JWT_PUBLIC_KEY: keys.publicKey });
    ({ url, close } = await listenOnFreePort(createApp({ config, runtime: { log, readiness: [] } })));
  });
  afterAll(async () => {
    await close();
    await mongoose.disconnect();
  });
  return () => url;
}

export function newUser(role: TestUser['role'] = 'seller'): TestUser {
  return { id: newUuid(), ref: newReference('USR'), role };
}

export const tokenOf = (user: TestUser) => signTestToken(keys.privateKey, user);

export { call } from '@mkt/infra';
