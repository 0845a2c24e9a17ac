import express from 'express';
import pino from 'pino';
import { Schema } from 'mongoose';
import {
  closeDatabase,
  createDatabase,
  indexBuildMigration,
  indexesMigration,
  Migrator,
  openDatabase,
  type Database,
  type IndexSpec,
  type Migration,
} from '@mkt/kit/db';
import { createRuntime } from '@mkt/kit/runtime';
import { DatabaseBehindError, MigrationLeaseBusyError, migrationChecksum, type MigrationContext } from '../src/migrations';
import { runService } from '../src/runtime';
import { freePort, testServers, uniqueName } from '@mkt/infra';

const log = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const opened: Database[] = [];
async function database(dbName = uniqueName('kit_migrations')): Promise<Database> {
  const db = createDatabase();
  await openDatabase(db, { url: testServers().mongoUrl, dbName, log });
  opened.push(db);
  return db;
}
afterAll(async () => {
  for (const db of opened) await closeDatabase(db);
});

const contextOf = (db: Database): MigrationContext => ({ db, log, models: [], outboxSources: [] });

/** Migrations that count their runs (in this process) and take a while, so two runners overlap. */
function counted(names: string[], runs: Map<string, number>, ms = 150): Migration[] {
  return names.map((name) => ({
    name,
    up: async ({ db }) => {
      runs.set(name, (runs.get(name) ?? 0) + 1);
      await sleep(ms);
      await db.collection('things').insertOne({ by: name } as never);
    },
    down: async ({ db }) => {
      await db.collection('things').deleteMany({ by: name });
    },
  }));
}

describe('the migration runner', () => {
  test('two runners at once (two replicas, two jobs): each migration runs exactly once, both end well', async () => {
    const db = await database();
    const runs = new Map<string, number>();
    const migrations = counted(['0001-a', '0002-b', '0003-c'], runs);
    const runners = [0, 1, 2].map((i) => new Migrator({ context: contextOf(db), migrations, owner: `runner-${i}`, leaseMs: 2_000 }));
    const applied = await Promise.all(runners.map((runner) => runner.up()));
    expect([...runs.values()]).toEqual([1, 1, 1]);
    expect(applied.flat().sort()).toEqual(['0001-a', '0002-b', '0003-c']);
    expect(await db.collection('things').countDocuments()).toBe(3);
    expect(await db.collection('migration_lease').countDocuments()).toBe(0);
  });

  test('what ran is recorded in `migrations`: name, checksum, when, how long, by whom; status reads it', async () => {
    const db = await database();
    const migrations = counted(['0001-a', '0002-b'], new Map(), 20);
    const runner = new Migrator({ context: contextOf(db), migrations, owner: 'me' });
    expect(await runner.pending()).toEqual(['0001-a', '0002-b']);
    const before = Date.now();
    await runner.up({ to: '0001-a' });
    const records = await db.collection('migrations').find({}).toArray();
    expect(records).toEqual([
      {
        _id: '0001-a',
        checksum: expect.stringMatching(/^[0-9a-f]{16}$/),
        appliedAt: expect.any(Date),
        durationMs: expect.any(Number),
        by: 'me',
      },
    ]);
    expect(records[0]!.appliedAt.getTime()).toBeGreaterThanOrEqual(before - 1_000);
    expect(records[0]!.durationMs).toBeGreaterThanOrEqual(15);
    expect(await runner.status()).toMatchObject([
      { name: '0001-a', state: 'applied', reversible: true, changed: false },
      { name: '0002-b', state: 'pending', reversible: true },
    ]);
    // Other code under an applied name: status says so.
    const edited = new Migrator({ context: contextOf(db), migrations: [{ ...migrations[0]!, up: async () => undefined }, migrations[1]!] });
    expect((await edited.status())[0]).toMatchObject({ state: 'applied', changed: true });
    // The same work in other compiled code, its released checksum named: not marked.
    const recorded = records[0]!.checksum as string;
    const renamed = new Migrator({
      context: contextOf(db),
      migrations: [{ ...migrations[0]!, up: async () => undefined, formerChecksums: ['0123456789abcdef', recorded] }, migrations[1]!],
    });
    expect((await renamed.status())[0]).toMatchObject({ state: 'applied', changed: false });
    const otherNamed = new Migrator({
      context: contextOf(db),
      migrations: [{ ...migrations[0]!, up: async () => undefined, formerChecksums: ['0123456789abcdef'] }, migrations[1]!],
    });
    expect((await otherNamed.status())[0]).toMatchObject({ state: 'applied', changed: true });
    // A former checksum that no run could have recorded (a typo) is refused, not silently never matched.
    expect(
      () => new Migrator({ context: contextOf(db), migrations: [{ ...migrations[0]!, formerChecksums: ['11bbee743b7d8e1'] }] }),
    ).toThrow(/former checksums are 16 hex digits, not 11bbee743b7d8e1/);
  });

  test('down undoes the newest applied migrations and forgets them; one without down stops it', async () => {
    const db = await database();
    const runs = new Map<string, number>();
    const [a, b] = counted(['0001-a', '0002-b'], runs, 0);
    const irreversible: Migration = { name: '0000-first', up: async () => undefined };
    const runner = new Migrator({ context: contextOf(db), migrations: [irreversible, a!, b!] });
    await runner.up();
    expect(await runner.down()).toEqual(['0002-b']);
    expect(await db.collection('things').countDocuments({ by: '0002-b' })).toBe(0);
    expect(await runner.pending()).toEqual(['0002-b']);
    await expect(runner.down({ steps: 5 })).rejects.toThrow('migration 0000-first cannot be undone');
    // 0001-a went before the irreversible one stopped it; the lease is free again.
    expect(await runner.pending()).toEqual(['0001-a', '0002-b']);
    expect(await db.collection('migration_lease').countDocuments()).toBe(0);
    await runner.up();
    expect(runs.get('0002-b')).toBe(2);
  });

  test('a failing migration is not recorded, stops the run, and releases the lease', async () => {
    const db = await database();
    const runs = new Map<string, number>();
    const [a, c] = counted(['0001-a', '0003-c'], runs, 0);
    const failing: Migration = {
      name: '0002-fails',
      up: async () => {
        throw new Error('half-way');
      },
    };
    const runner = new Migrator({ context: contextOf(db), migrations: [a!, failing, c!] });
    await expect(runner.up()).rejects.toThrow('half-way');
    expect((await db.collection('migrations').find({}).toArray()).map(({ _id }) => _id)).toEqual(['0001-a']);
    expect(runs.has('0003-c')).toBe(false);
    expect(await db.collection('migration_lease').countDocuments()).toBe(0);
    // Another runner takes the lease at once (no waiting out an expiry).
    expect(await new Migrator({ context: contextOf(db), migrations: [] }).tryAcquire()).toBe(true);
  });

  test('a lease a dead run left is taken over once it expires; a live one is waited for, then given up on', async () => {
    const db = await database();
    const runs = new Map<string, number>();
    const migrations = counted(['0001-a'], runs, 0);
    await db
      .collection('migration_lease')
      .insertOne({ _id: 'migrations', owner: 'dead-pod', takenAt: new Date(), expiresAt: new Date(Date.now() + 60_000) } as never);
    const impatient = new Migrator({ context: contextOf(db), migrations, waitMs: 300 });
    await expect(impatient.up()).rejects.toBeInstanceOf(MigrationLeaseBusyError);
    expect(runs.size).toBe(0);
    await db.collection('migration_lease').updateOne({ _id: 'migrations' } as never, { $set: { expiresAt: new Date(Date.now() - 1) } });
    expect(await new Migrator({ context: contextOf(db), migrations }).up()).toEqual(['0001-a']);
    expect(runs.get('0001-a')).toBe(1);
  });

  test('a run holding the lease renews it: a long migration is never taken over by a second runner', async () => {
    const db = await database();
    const runs = new Map<string, number>();
    const migrations = counted(['0001-slow'], runs, 900);
    const first = new Migrator({ context: contextOf(db), migrations, leaseMs: 300 });
    const second = new Migrator({ context: contextOf(db), migrations, leaseMs: 300 });
    const one = first.up();
    await sleep(100);
    await Promise.all([one, second.up()]);
    expect(runs.get('0001-slow')).toBe(1);
  });

  test('the indexes migration builds the models’ indexes and the outbox sweep index', async () => {
    const db = await database();
    const Parcel = db.model('Parcel', new Schema({ _id: String, code: { type: String, unique: true } }), 'parcels');
    await new Migrator({
      context: { db, log, models: [Parcel], outboxSources: [{ name: 'parcels', model: Parcel }] },
      migrations: [indexesMigration('0001-indexes')],
    }).up();
    const names = (await db.collection('parcels').indexes()).map(({ name }) => name);
    expect(names).toEqual(expect.arrayContaining(['code_1', 'outbox_pending']));
  });

  test('an index-building migration builds its indexes, then drops those they replace; again changes nothing; down reverses it; its indexes are in its checksum', async () => {
    const db = await database();
    const build: IndexSpec[] = [
      { collection: 'parcels', key: { owner: 1, at: -1 }, name: 'owner_1_at_-1' },
      { collection: 'parcels', key: { code: 1 }, name: 'open_code', partialFilterExpression: { open: true } },
    ];
    const replaces: IndexSpec[] = [{ collection: 'parcels', key: { owner: 1 }, name: 'owner_1' }];
    await db.collection('parcels').createIndex({ owner: 1 });
    const migration = indexBuildMigration('0002-parcel-indexes', build, replaces);
    const migrator = new Migrator({ context: { db, log, models: [], outboxSources: [] }, migrations: [migration] });
    const indexes = async () =>
      Object.fromEntries(
        (await db.collection('parcels').indexes()).map((index) => [index.name, [index.key, index.partialFilterExpression]]),
      );

    expect(await migrator.up()).toEqual(['0002-parcel-indexes']);
    const built = {
      _id_: [{ _id: 1 }, undefined],
      'owner_1_at_-1': [{ owner: 1, at: -1 }, undefined],
      open_code: [{ code: 1 }, { open: true }],
    };
    expect(await indexes()).toEqual(built);
    await migration.up({ db, log, models: [], outboxSources: [] });
    expect(await indexes()).toEqual(built);

    expect(await migrator.down()).toEqual(['0002-parcel-indexes']);
    expect(await indexes()).toEqual({ _id_: [{ _id: 1 }, undefined], owner_1: [{ owner: 1 }, undefined] });

    // The same code with other indexes is another step: a record of the first reads as changed.
    const other = indexBuildMigration('0002-parcel-indexes', build.slice(0, 1), replaces);
    expect(migrationChecksum(other)).not.toBe(migrationChecksum(migration));
    expect(migrationChecksum(indexBuildMigration('0002-parcel-indexes', build, replaces))).toBe(migrationChecksum(migration));
    // Kit's code is not hashed, its definition is (with the builder's version): the same definition read by other code is the same step.
    const rewritten = { ...migration, up: async () => undefined, down: async () => undefined };
    expect(migrationChecksum(rewritten)).toBe(migrationChecksum(migration));
  });
});

describe('a service on a database behind its migrations', () => {
  test('refuses to start, naming the migrations not applied and the command to run', async () => {
    const dbName = uniqueName('kit_behind');
    const db = createDatabase();
    const Parcel = db.model('Parcel', new Schema({ _id: String, code: { type: String, unique: true } }), 'parcels');
    const config = {
      PORT: await freePort(),
      HOST: '127.0.0.1',
      MONGO_URL: testServers().mongoUrl,
      MONGO_DB: dbName,
      AMQP_URL: testServers().amqpUrl,
      SHUTDOWN_TIMEOUT_MS: 1_000,
    };
    const service = {
      runtime: createRuntime({ name: 'behind', config, log, db }),
      config,
      models: [Parcel],
      migrations: [indexesMigration('0001-indexes')],
      app: express(),
    };
    const start = runService(service);
    await expect(start).rejects.toBeInstanceOf(DatabaseBehindError);
    await expect(start).rejects.toThrow(`database ${dbName} is behind this release: migrations not applied: 0001-indexes`);
    await expect(fetch(`http://127.0.0.1:${config.PORT}/`)).rejects.toThrow();
    // Nothing was built by the refused start: no index, no record.
    expect(await db.collection('migrations').countDocuments()).toBe(0);
    await closeDatabase(db);
  });
});
