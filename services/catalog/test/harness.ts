import mongoose from 'mongoose';
import pino from 'pino';
import { startComponent, stopRuntime, type StartedRuntime } from '@mkt/kit/runtime';
import { testEnv, testIdentity, type TestUser } from '@mkt/infra';
import { catalogService, type CatalogParts } from '../src/composition';
import { loadConfig } from '../src/config';

const identity = testIdentity();
/** This file's database and broker namespace. */
export const env = testEnv('catalog');

let current: CatalogParts | undefined;

/**
 * The catalog as main.ts composes it, for one test file, against the real servers; `extra` adds
 * to or overrides its environment when it starts (e.g. `MONGO_URL` through a wire counter).
 */
export function useCatalog(extra: () => Record<string, string> = () => ({})): () => string {
  let started: StartedRuntime;
  beforeAll(async () => {
    const config = loadConfig(env.serviceEnv(identity.keys.publicKey, extra()));
    const service = catalogService(config, pino({ level: 'silent' }));
    current = service.parts;
    started = await startComponent(service.definition, env.dbName);
  });
  afterAll(async () => {
    await stopRuntime(started);
    await mongoose.disconnect();
  });
  return () => started.url;
}

/** The models of the catalog this file started (its composition's, on its database). */
export function models(): CatalogParts['models'] {
  if (!current) throw new Error('No catalog started in this file yet');
  return current.models;
}

export const newUser = (role: TestUser['role'] = 'seller'): TestUser => identity.newUser(role);

export const tokenOf = (user: TestUser) => identity.tokenOf(user);

export { call } from '@mkt/infra';

/** A seller's product as the tests create it (electronics, in stock, shipped by the seller). */
export const PHONE = {
  name: 'Tecno Spark 20',
  description: '<p>A phone</p>',
  sellingPrice: 12999.99,
  stock: 12,
  shippingHandler: 'Seller',
  categoryId: 'MKT-CAT-ELECTRON',
};
