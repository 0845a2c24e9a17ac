import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mongoose from 'mongoose';
import { javaFlags, javaHeapFlags, LEAN_JAVA_FLAGS, startLocalMongo, type LocalServer } from '../src/mongo';

async function withServer<T>(server: LocalServer, work: (db: mongoose.mongo.Db) => Promise<T>): Promise<T> {
  const client = await mongoose.mongo.MongoClient.connect(server.url);
  try {
    return await work(client.db('infra_test'));
  } finally {
    await client.close();
    await server.stop();
  }
}

describe('the JVM heap of mongo-java-server', () => {
  const file = { kind: 'file' as const, path: '/tmp/x.h2' };
  const memory = { kind: 'memory' as const };

  test('bounded on disk (192m by default), unbounded in memory, MONGO_JAVA_MAX_HEAP overrides both', () => {
    expect(javaHeapFlags(file, {})).toContain('-Xmx192m');
    expect(javaHeapFlags(memory, {}).some((flag) => flag.startsWith('-Xmx'))).toBe(false);
    expect(javaHeapFlags(memory, { MONGO_JAVA_MAX_HEAP: '2g' })).toContain('-Xmx2g');
    expect(javaHeapFlags(file, { MONGO_JAVA_MAX_HEAP: '256m' })).toContain('-Xmx256m');
    expect(() => javaHeapFlags(file, { MONGO_JAVA_MAX_HEAP: 'lots' })).toThrow(/MONGO_JAVA_MAX_HEAP/);
  });

  test('on disk a small initial heap, the client compiler only and a young generation of 8 MB; in memory the JVM defaults; MONGO_JAVA_OPTS last', () => {
    expect(javaFlags(file, {})).toEqual([...javaHeapFlags(file, {}), '-Xms16m', '-XX:TieredStopAtLevel=1', '-XX:MaxNewSize=8m']);
    expect(javaFlags(memory, {})).toEqual(javaHeapFlags(memory, {}));
    // A later flag wins in the JVM: the caller's come after ours, so they can undo them.
    const flags = javaFlags(file, { MONGO_JAVA_OPTS: ' -XX:TieredStopAtLevel=4  -Xms64m ' });
    expect(flags.slice(-2)).toEqual(['-XX:TieredStopAtLevel=4', '-Xms64m']);
    expect(flags.indexOf('-XX:TieredStopAtLevel=1')).toBeLessThan(flags.indexOf('-XX:TieredStopAtLevel=4'));
    expect(javaFlags(memory, { MONGO_JAVA_OPTS: '-Xss1m' })).toContain('-Xss1m');
  });

  test('the initial heap on disk is never above the bound: the JVM refuses -Xms above -Xmx', () => {
    const initial = (env: NodeJS.ProcessEnv) => javaFlags(file, env).filter((flag) => flag.startsWith('-Xms'));
    expect(initial({ MONGO_JAVA_MAX_HEAP: '8m' })).toEqual(['-Xms8m']);
    expect(initial({ MONGO_JAVA_MAX_HEAP: '12288k' })).toEqual(['-Xms12288k']);
    expect(initial({ MONGO_JAVA_MAX_HEAP: '16m' })).toEqual(['-Xms16m']);
    expect(initial({ MONGO_JAVA_MAX_HEAP: '1g' })).toEqual(['-Xms16m']);
    expect(initial({})).toEqual(['-Xms16m']);
  });

  test('the young generation capped at 8 MB on disk, left to the JVM under a bound of 24m (its third is smaller)', () => {
    const young = (env: NodeJS.ProcessEnv) => javaFlags(file, env).filter((flag) => flag.startsWith('-XX:MaxNewSize'));
    expect(young({})).toEqual(['-XX:MaxNewSize=8m']);
    expect(young({ MONGO_JAVA_MAX_HEAP: '24m' })).toEqual(['-XX:MaxNewSize=8m']);
    expect(young({ MONGO_JAVA_MAX_HEAP: '1g' })).toEqual(['-XX:MaxNewSize=8m']);
    expect(young({ MONGO_JAVA_MAX_HEAP: '16m' })).toEqual([]);
    expect(young({ MONGO_JAVA_MAX_HEAP: '8m' })).toEqual([]);
    expect(javaFlags(memory, {}).some((flag) => flag.startsWith('-XX:MaxNewSize'))).toBe(false);
    // A caller's own size comes after ours and wins in the JVM.
    expect(javaFlags(file, { MONGO_JAVA_OPTS: '-XX:MaxNewSize=32m' }).slice(-1)).toEqual(['-XX:MaxNewSize=32m']);
  });
});

describe('the local MongoDB-compatible server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'infra-mongo-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('with file storage (npm start), documents and unique indexes survive a restart', async () => {
    const storage = { kind: 'file' as const, path: join(dir, 'mongo.h2') };
    const first = await startLocalMongo(storage, () => undefined);
    // Its JVM runs with the bounded heap and the lean flags of the disk storage (the stack's memory
    // is on the whole), before the launcher's class path, where the JVM reads its options.
    for (const { name, pid } of first!.processes?.() ?? []) {
      if (name !== 'mongo-java-server') continue;
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      for (const flag of ['-Xmx192m', ...LEAN_JAVA_FLAGS]) expect(args.indexOf(flag)).toBeGreaterThan(0);
      for (const flag of LEAN_JAVA_FLAGS) expect(args.indexOf(flag)).toBeLessThan(args.indexOf('-cp'));
    }
    await withServer(first!, async (db) => {
      await db.collection('users').createIndex({ email: 1 }, { unique: true });
      await db.collection('users').insertOne({ _id: 'u1' as never, email: 'sara@example.com' });
    });
    const second = await startLocalMongo(storage, () => undefined);
    await withServer(second!, async (db) => {
      expect(await db.collection('users').findOne({ _id: 'u1' as never })).toMatchObject({ email: 'sara@example.com' });
      await expect(db.collection('users').insertOne({ _id: 'u2' as never, email: 'sara@example.com' })).rejects.toMatchObject({
        code: 11000,
      });
    });
  }, 120_000);

  test('a data file another server holds: the start fails naming that process and how to stop it, not with a Java trace', async () => {
    const storage = { kind: 'file' as const, path: join(dir, 'held.h2') };
    const holder = (await startLocalMongo(storage, () => undefined))!;
    try {
      const { pid } = holder.processes!()[0]!;
      const second = startLocalMongo(storage, () => undefined);
      await expect(second).rejects.toThrow(`mongo-java-server cannot open ${storage.path}: another process has it open.`);
      await expect(second).rejects.toThrow(`process ${pid}: `);
      await expect(second).rejects.toThrow(`\`kill ${pid}\``);
      await expect(second).rejects.not.toThrow('Exception');
    } finally {
      await holder.stop();
    }
  }, 120_000);

  test('with memory storage (tests), a restart starts empty', async () => {
    const first = await startLocalMongo({ kind: 'memory' }, () => undefined);
    await withServer(first!, (db) => db.collection('things').insertOne({ _id: 't1' as never }));
    const second = await startLocalMongo({ kind: 'memory' }, () => undefined);
    await withServer(second!, async (db) => expect(await db.collection('things').countDocuments()).toBe(0));
  }, 120_000);

  describe.each([
    ['memory', () => ({ kind: 'memory' as const })],
    ['file', () => ({ kind: 'file' as const, path: join(dir, `narrowed-${Date.now()}.h2`) })],
  ])("%s storage: a query naming a unique index's keys and more answers as a scan would", (_kind, storage) => {
    test('guarded writes, reads, counts, deletes and upserts on _id, a unique key, a compound one and a sparse one', async () => {
      const server = (await startLocalMongo(storage(), () => undefined))!;
      await withServer(server, async (db) => {
        const things = db.collection<mongoose.mongo.Document>('things');
        await things.createIndex({ userId: 1 }, { unique: true });
        await things.createIndex({ a: 1, b: 1 }, { unique: true });
        await things.createIndex({ code: 1 }, { unique: true, sparse: true });
        await things.insertMany([
          { _id: 'w1', userId: 'u1', a: 1, b: 'x', n: 1, ops: [], meta: { k: 1 } },
          { _id: 'w2', userId: 'u2', a: 1, b: 'y', n: 7, ops: ['x'], code: 'c2' },
          { _id: 'w3', userId: 'u3', a: 2, b: 'x', n: 3, ops: [] },
        ] as never);

        // The guard in the filter decides, as on MongoDB: applied once, then refused.
        expect((await things.updateOne({ _id: 'w1', ops: { $ne: 'x' } } as never, { $push: { ops: 'x' } } as never)).modifiedCount).toBe(1);
        expect((await things.updateOne({ _id: 'w1', ops: { $ne: 'x' } } as never, { $push: { ops: 'x' } } as never)).modifiedCount).toBe(0);
        expect(await things.findOne({ userId: 'u2', n: { $gte: 5 } })).toMatchObject({ _id: 'w2' });
        expect(await things.findOne({ userId: 'u1', n: { $gte: 5 } })).toBeNull();
        expect(await things.findOne({ userId: 'nobody', n: { $gte: 0 } })).toBeNull();
        // A compound key pinned (a number of another type included), with a field beside it.
        expect(await things.findOne({ a: 1, b: 'x', n: 1 })).toMatchObject({ _id: 'w1' });
        expect(await things.findOne({ a: 1.0, b: 'y', n: 7 })).toMatchObject({ _id: 'w2' });
        expect(await things.findOne({ a: 1, b: 'x', n: 7 })).toBeNull();
        // A key given as an operator or a document is not pinned: the answer is still right.
        expect(await things.find({ userId: { $in: ['u1', 'u3'] }, n: { $lt: 5 } }).toArray()).toHaveLength(2);
        expect(await things.findOne({ _id: 'w1', meta: { k: 1 } } as never)).toMatchObject({ userId: 'u1' });
        expect(await things.findOne({ _id: 'w1', meta: { k: 2 } } as never)).toBeNull();
        // A sparse key: only the documents that have it.
        expect(await things.findOne({ code: 'c2', n: 7 })).toMatchObject({ _id: 'w2' });
        expect(await things.findOne({ code: 'c2', n: 1 })).toBeNull();
        // Beside $or and $expr.
        expect(await things.findOne({ _id: 'w3', $or: [{ n: 2 }, { n: 3 }] } as never)).toMatchObject({ userId: 'u3' });
        expect(await things.findOne({ _id: 'w3', $expr: { $gt: ['$n', 5] } } as never)).toBeNull();
        expect(await things.countDocuments({ userId: 'u2', ops: 'x' })).toBe(1);
        expect(await things.countDocuments({ userId: 'u3', ops: 'x' })).toBe(0);
        // findOneAndUpdate with the guard, an upsert that finds nothing, a guarded delete.
        expect(await things.findOneAndUpdate({ _id: 'w3', n: 3 } as never, { $inc: { n: 1 } }, { returnDocument: 'after' })).toMatchObject({
          n: 4,
        });
        expect(await things.findOneAndUpdate({ _id: 'w3', n: 3 } as never, { $inc: { n: 1 } }, { returnDocument: 'after' })).toBeNull();
        await things.updateOne({ _id: 'w4', userId: 'u4' } as never, { $setOnInsert: { n: 0 } }, { upsert: true });
        expect(await things.findOne({ _id: 'w4' } as never)).toMatchObject({ userId: 'u4', n: 0 });
        expect((await things.deleteOne({ _id: 'w2', n: 1 } as never)).deletedCount).toBe(0);
        expect((await things.deleteOne({ _id: 'w2', n: 7 } as never)).deletedCount).toBe(1);
        expect(await things.countDocuments()).toBe(3);
      });
    }, 120_000);
  });
});
