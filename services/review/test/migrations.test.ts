import mongoose from 'mongoose';
import pino from 'pino';
import { newReference } from '@mkt/contracts';
import { Migrator } from '@mkt/kit/db';
import { startComponent, stopRuntime, type StartedRuntime } from '@mkt/kit/runtime';
import { startWireCounter, testEnv, testIdentity, testServers, uniqueName, type WireCounter } from '@mkt/infra';
import { reviewService } from '../src/composition';
import { loadConfig } from '../src/config';
import { reviewMigrations } from '../src/migrations';

/**
 * The review database's migrations on the running service's database, and what a public listing
 * reads of `eligibility`, seen on the wire (the test server ignores non-unique indexes: what the
 * service sends and which indexes exist is what a test can pin).
 */
const identity = testIdentity();
const env = testEnv('review-migrations');
const log = pino({ level: 'silent' });
let counter: WireCounter;
let started: StartedRuntime;
let url: string;
let service: ReturnType<typeof reviewService>;

beforeAll(async () => {
  counter = await startWireCounter(testServers().mongoUrl, { record: true });
  service = reviewService(loadConfig(env.serviceEnv(identity.keys.publicKey, { MONGO_URL: counter.url })), log);
  started = await startComponent(service.definition, env.dbName);
  ({ url } = started);
});
afterAll(async () => {
  await stopRuntime(started);
  await mongoose.disconnect();
  await counter.stop();
});

const eligibility = () => service.parts.models.Eligibility.collection;
const migrator = () =>
  new Migrator({ context: { db: service.parts.models.Eligibility.db, log, models: [], outboxSources: [] }, migrations: reviewMigrations });

describe('0002-consultation-reference-index: a listing by reference finds the consultation through an index', () => {
  const referenceIndex = async () => (await eligibility().indexes()).find((index) => index.name === 'consultationReferenceId_1');
  /** The index as the model declares it (what `0001-indexes` builds on a database made by this release). */
  const declared = () => {
    const found = service.parts.models.Eligibility.schema.indexes().find(([, options]) => options.name === 'consultationReferenceId_1');
    expect(found).toBeDefined();
    return found!;
  };

  test('a database whose indexes were built before it gets the index, the one the model declares; down drops it, up builds it again', async () => {
    const [key, options] = declared();
    expect(key).toEqual({ consultationReferenceId: 1 });
    expect(options).not.toHaveProperty('unique');
    expect(options).not.toHaveProperty('sparse');
    expect(await referenceIndex()).toMatchObject({ key });

    // As a database of the previous release has it: `0001-indexes` ran before the model declared it.
    await eligibility().dropIndex('consultationReferenceId_1');
    await service.parts.models.Eligibility.db.collection('migrations').deleteOne({ _id: '0002-consultation-reference-index' } as never);
    expect(await referenceIndex()).toBeUndefined();
    expect(await migrator().up()).toEqual(['0002-consultation-reference-index']);
    expect(await referenceIndex()).toMatchObject({ key });

    // Run again (the index exists): nothing changes. Down: no index; up builds it again.
    await service.parts.models.Eligibility.db.collection('migrations').deleteOne({ _id: '0002-consultation-reference-index' } as never);
    expect(await migrator().up()).toEqual(['0002-consultation-reference-index']);
    expect((await eligibility().indexes()).filter((index) => index.name === 'consultationReferenceId_1')).toHaveLength(1);
    expect(await migrator().down()).toEqual(['0002-consultation-reference-index']);
    expect(await referenceIndex()).toBeUndefined();
    expect(await migrator().up()).toEqual(['0002-consultation-reference-index']);
    expect(await referenceIndex()).toMatchObject({ key });
  });

  test("the listing by reference reads eligibility by the reference alone, the index's one key, and answers the consultation's reviews", async () => {
    const consultation = { id: uniqueName('con'), ref: newReference('CON') };
    await eligibility().insertOne({
      _id: `${consultation.id}:buyer-1`,
      consultationId: consultation.id,
      consultationReferenceId: consultation.ref,
      buyerId: 'buyer-1',
      sessionIds: ['ses-1'],
      paid: true,
    } as never);
    const list = (key: string) =>
      identity.as(() => url, undefined)('GET', `/reviews/by-entity?entityType=consultation_service&entityId=${key}`);

    counter.reset();
    expect((await list(consultation.ref)).status).toBe(200);
    expect((await list(consultation.id)).status).toBe(200);
    const reads = counter
      .commands()
      .filter((command) => command.name === 'find')
      .map((command) => mongoose.mongo.BSON.deserialize(command.body))
      .filter((body) => body.find === 'eligibility')
      .map((body) => body.filter as Record<string, unknown>);
    // By reference and by id (no reference: the key is kept as it is), each one equality on the indexed field.
    expect(reads).toEqual([{ consultationReferenceId: consultation.ref }, { consultationReferenceId: consultation.id }]);
    const [key] = declared();
    for (const filter of reads) expect(Object.keys(filter)).toEqual(Object.keys(key));
  });
});
