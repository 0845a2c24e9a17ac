import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mongoose from 'mongoose';
import { testServers, uniqueName } from '@mkt/infra';

const run = promisify(execFile);

/**
 * Every guard of this code base is a conditional single-document update. This proves the
 * provided server applies them atomically across OS processes (two clients, two connection
 * pools), not only within one: a server that runs an update as "find, then write" loses some.
 */
describe('guarded updates raced from two OS processes', () => {
  const { mongoUrl } = testServers();
  const dbName = uniqueName('kit_race');
  let client: mongoose.mongo.MongoClient;

  beforeAll(async () => {
    client = await mongoose.mongo.MongoClient.connect(mongoUrl);
  });
  afterAll(async () => {
    await client.db(dbName).dropDatabase();
    await client.close();
  });

  test.each([1, 2, 3])('round %i: exact counts, nothing lost, no guard passed twice', async () => {
    const counters = client.db(dbName).collection<{ _id: string; value: number }>('counters');
    await counters.deleteMany({});
    await counters.insertMany([
      { _id: 'guarded', value: 300 },
      { _id: 'plain', value: 0 },
    ]);
    const worker = join(__dirname, 'fixtures/race-worker.cjs');
    const perProcess = 80;
    const outputs = await Promise.all(
      [1, 2].map(() => run(process.execPath, [worker, mongoUrl, dbName, String(perProcess)], { timeout: 60_000 })),
    );
    const applied = outputs.reduce((sum, { stdout }) => sum + Number(stdout), 0);
    // 300 allows exactly 100 decrements of 3 (leaving 0); 160 were tried.
    expect(applied).toBe(100);
    expect((await counters.findOne({ _id: 'guarded' }))?.value).toBe(0);
    expect((await counters.findOne({ _id: 'plain' }))?.value).toBe(2 * perProcess);
  });
});
