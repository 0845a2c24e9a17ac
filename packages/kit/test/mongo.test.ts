import mongoose, { Schema } from 'mongoose';
import pino from 'pino';
import { closeDatabase, createDatabase, isDatabaseReady, openDatabase } from '@mkt/kit/db';
import { testServers, uniqueName } from '@mkt/infra';
import { parseConfig, serviceEnv } from '@mkt/kit/runtime';

const Counter = mongoose.model('Counter', new Schema({ _id: String, value: Number }, { versionKey: false }));

beforeAll(async () => {
  await openDatabase(mongoose.connection, { url: testServers().mongoUrl, dbName: uniqueName('kit_mongo'), log: pino({ level: 'silent' }) });
});
afterAll(() => mongoose.disconnect());

describe('single-document updates under concurrency', () => {
  test('50 concurrent guarded decrements: exactly the ones the guard allows apply, none is lost', async () => {
    await Counter.create({ _id: 'c', value: 100 });
    const results = await Promise.all(
      Array.from({ length: 50 }, () => Counter.updateOne({ _id: 'c', value: { $gte: 3 } }, { $inc: { value: -3 } })),
    );
    expect(results.filter((result) => result.modifiedCount === 1)).toHaveLength(33);
    expect((await Counter.findById('c').lean())?.value).toBe(1);
  });

  test('50 concurrent $inc through findOneAndUpdate all count', async () => {
    await Counter.create({ _id: 'd', value: 0 });
    await Promise.all(Array.from({ length: 50 }, () => Counter.findOneAndUpdate({ _id: 'd' }, { $inc: { value: 1 } })));
    expect((await Counter.findById('d').lean())?.value).toBe(50);
  });
});

describe('a database per service (createDatabase)', () => {
  const log = pino({ level: 'silent' });
  const parcelSchema = new Schema({ _id: String, owner: String }, { versionKey: false });

  test('two services in one process write to two databases: a model is bound to its own connection', async () => {
    const first = createDatabase();
    const second = createDatabase();
    const FirstParcel = first.model('Parcel', parcelSchema, 'parcels');
    const SecondParcel = second.model('Parcel', parcelSchema, 'parcels');
    expect(isDatabaseReady(first)).toBe(false);
    await openDatabase(first, { url: testServers().mongoUrl, dbName: uniqueName('kit_first'), log });
    await openDatabase(second, { url: testServers().mongoUrl, dbName: uniqueName('kit_second'), log });
    try {
      expect(isDatabaseReady(first)).toBe(true);
      await FirstParcel.create({ _id: 'p1', owner: 'first' });
      expect(await SecondParcel.countDocuments({})).toBe(0);
      expect(await FirstParcel.countDocuments({})).toBe(1);
      // Nothing reached mongoose's process-global connection either.
      expect(mongoose.models.Parcel).toBeUndefined();
    } finally {
      await closeDatabase(first);
      await closeDatabase(second);
    }
    expect(isDatabaseReady(first)).toBe(false);
  });

  test('a connection waits for an answer MONGO_SOCKET_TIMEOUT_MS at most (30 s unless said); 0 only by the code of a one-shot job', async () => {
    const base = { MONGO_URL: testServers().mongoUrl, AMQP_URL: 'amqp://x' };
    expect(parseConfig(serviceEnv(8081), base).MONGO_SOCKET_TIMEOUT_MS).toBe(30_000);
    expect(parseConfig(serviceEnv(8081), { ...base, MONGO_SOCKET_TIMEOUT_MS: '2000' }).MONGO_SOCKET_TIMEOUT_MS).toBe(2_000);
    for (const bad of ['0', '999', '1.5', 'soon', '600001'])
      expect(() => parseConfig(serviceEnv(8081), { ...base, MONGO_SOCKET_TIMEOUT_MS: bad })).toThrow(/MONGO_SOCKET_TIMEOUT_MS/);
    const timeouts = async (socketTimeoutMs?: number) => {
      const db = createDatabase();
      await openDatabase(db, { url: testServers().mongoUrl, dbName: uniqueName('kit_timeout'), log, socketTimeoutMs });
      try {
        return db.getClient().options.socketTimeoutMS;
      } finally {
        await closeDatabase(db);
      }
    };
    expect(await timeouts()).toBe(30_000);
    expect(await timeouts(2_000)).toBe(2_000);
    expect(await timeouts(0)).toBe(0);
  });

  test('openDatabase gives up after its start timeout when nothing answers', async () => {
    const db = createDatabase();
    await expect(
      openDatabase(db, { url: 'mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200', log, startTimeoutMs: 300 }),
    ).rejects.toThrow();
    expect(isDatabaseReady(db)).toBe(false);
  });
});
