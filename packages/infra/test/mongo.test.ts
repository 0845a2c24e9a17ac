import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mongoose from 'mongoose';
import { startLocalMongo, type LocalServer } from '../src/mongo';

async function withServer<T>(server: LocalServer, work: (db: mongoose.mongo.Db) => Promise<T>): Promise<T> {
  const client = await mongoose.mongo.MongoClient.connect(server.url);
  try {
    return await work(client.db('infra_test'));
  } finally {
    await client.close();
    await server.stop();
  }
}

describe('the local MongoDB-compatible server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'infra-mongo-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('with file storage (npm start), documents and unique indexes survive a restart', async () => {
    const storage = { kind: 'file' as const, path: join(dir, 'mongo.h2') };
    const first = await startLocalMongo(storage, () => undefined);
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
});
