import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// scripts/backup.mjs against the real MongoDB-compatible server of the tests: what goes in comes
// back byte for byte with its indexes, and a restore refuses what it must refuse.
const root = join(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- an ES module, loaded through SWC as CommonJS (scripts/jest.config.js)
const { ensureGoTool } = require('../lib/go-tools.mjs') as {
  ensureGoTool: (toolsDir: string, name: string, tool: { module: string; version: string }) => string;
};
const tool = join(root, 'scripts', 'backup.mjs');
// The driver the tool uses (mongoose's own), borrowed as the e2e tests borrow kit's mongoose.
const { MongoClient, BSON } = createRequire(join(root, 'packages', 'kit', 'package.json'))('mongoose').mongo;
const mongoUrl = process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27017';
const work = mkdtempSync(join(tmpdir(), 'backup-test-'));
const client = new MongoClient(mongoUrl);

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Run {
  const result = spawnSync(process.execPath, [tool, ...args], {
    env: { ...process.env, MONGO_URL: mongoUrl, ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function ok(run: Run): Run {
  if (run.status !== 0) throw new Error(`backup.mjs exited ${run.status}: ${run.stderr}`);
  return run;
}

const unique = (name: string) => `bk_${name}_${randomBytes(4).toString('hex')}`;

/** Every document of every collection as the server sends it (raw BSON), and the index specs. */
async function snapshot(dbName: string) {
  const db = client.db(dbName);
  const names = (await db.listCollections().toArray()).map((c: { name: string }) => c.name).sort();
  const out: Record<string, { docs: string[]; indexes: unknown[] }> = {};
  for (const name of names) {
    const docs = await db
      .collection(name)
      .find({}, { raw: true, sort: { _id: 1 } })
      .toArray();
    const indexes = (await db.collection(name).listIndexes().toArray())
      .map(({ v: _v, ns: _ns, ...spec }: Record<string, unknown>) => spec)
      .sort((a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name));
    out[name] = { docs: docs.map((d: Buffer) => Buffer.from(d).toString('hex')), indexes };
  }
  return out;
}

/** A wallet-like database with every BSON type the services write and every index kind. */
async function seed(dbName: string) {
  const db = client.db(dbName);
  const types = db.collection('types');
  await types.insertMany([
    {
      _id: 'all',
      double: new BSON.Double(1.5),
      wholeDouble: new BSON.Double(2),
      int32: new BSON.Int32(42),
      long: BSON.Long.fromString('9007199254740993'),
      decimal: BSON.Decimal128.fromString('1234567890.123456789012345678'),
      string: 'ብር and ascii',
      object: { nested: { deeper: [1, 'two', { three: true }] } },
      array: [new BSON.Int32(1), BSON.Long.fromNumber(2), new BSON.Double(3)],
      binary: new BSON.Binary(Buffer.from([0, 1, 2, 255]), 0),
      uuid: new BSON.Binary(randomBytes(16), 4),
      objectId: new BSON.ObjectId(),
      bool: false,
      date: new Date('2026-01-02T03:04:05.678Z'),
      nil: null,
      regex: new BSON.BSONRegExp('^a.c$', 'i'),
      timestamp: new BSON.Timestamp({ t: 1_700_000_000, i: 7 }),
      minKey: new BSON.MinKey(),
      maxKey: new BSON.MaxKey(),
    },
    { _id: 'second', long: BSON.Long.fromNumber(-1), decimal: BSON.Decimal128.fromString('-0.01') },
  ]);
  const ledger = db.collection('ledger_entries');
  await ledger.createIndex({ walletId: 1, createdAt: -1 }, { name: 'wallet_time' });
  await ledger.createIndex({ idempotencyKey: 1 }, { unique: true, name: 'idem_unique' });
  await ledger.createIndex({ externalRef: 1 }, { unique: true, sparse: true, name: 'ext_sparse' });
  await ledger.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 3600, name: 'ttl' });
  await ledger.createIndex({ status: 1 }, { partialFilterExpression: { status: 'Pending' }, name: 'pending_only' });
  await ledger.insertMany(
    Array.from({ length: 1200 }, (_, i) => ({
      _id: `e${String(i).padStart(5, '0')}`,
      walletId: `w${i % 7}`,
      idempotencyKey: `k${i}`,
      amountMinor: BSON.Long.fromNumber(i * 100),
      createdAt: new Date(1_750_000_000_000 + i),
      status: i % 3 === 0 ? 'Pending' : 'Completed',
    })),
  );
  await db.createCollection('empty_one');
}

beforeAll(async () => {
  await client.connect();
});

afterAll(async () => {
  await client.close();
  rmSync(work, { recursive: true, force: true });
});

describe('backup and restore', () => {
  const source = unique('src');
  let folder: string;
  let manifest: {
    format: string;
    tool: string;
    databases: Array<{
      service: string;
      database: string;
      file: string;
      sha256: string;
      startedAt: string;
      endedAt: string;
      collections: Array<{ name: string; documents: number }>;
    }>;
  };

  beforeAll(async () => {
    await seed(source);
    folder = join(work, 'one');
    ok(cli(['backup', '--services', 'wallet', '--dir', folder], { WALLET_MONGO_DB: source }));
    manifest = JSON.parse(readFileSync(join(folder, 'manifest.json'), 'utf8'));
  });

  test('the manifest names the database, its collections and counts, the archive hash and the dump times', () => {
    expect(manifest.format).toBe('mkt-backup/1');
    expect(manifest.tool).toMatch(/^scripts\/backup\.mjs \d+\.\d+\.\d+$/);
    const [entry] = manifest.databases;
    expect(entry).toMatchObject({ service: 'wallet', database: source, file: 'wallet.bson.gz', attempts: 1 });
    expect(entry!.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(Date.parse(entry!.endedAt)).toBeGreaterThanOrEqual(Date.parse(entry!.startedAt));
    expect(entry!.collections).toEqual([
      { name: 'empty_one', documents: 0, indexes: [] },
      { name: 'ledger_entries', documents: 1200, indexes: ['wallet_time', 'idem_unique', 'ext_sparse', 'ttl', 'pending_only'] },
      { name: 'types', documents: 2, indexes: [] },
    ]);
  });

  test('a restore brings back every document byte for byte, every collection and every index', async () => {
    const target = unique('dst');
    ok(cli(['restore', folder], { WALLET_MONGO_DB: target }));
    expect(await snapshot(target)).toEqual(await snapshot(source));
    const all = await client.db(target).collection('types').findOne({ _id: 'all' }, { promoteLongs: false, promoteValues: false });
    expect(all.decimal).toBeInstanceOf(BSON.Decimal128);
    expect(all.long).toBeInstanceOf(BSON.Long);
    expect(all.long.toString()).toBe('9007199254740993');
    expect(all.int32).toBeInstanceOf(BSON.Int32);
    expect(all.wholeDouble).toBeInstanceOf(BSON.Double);
    // The unique index is enforced on the restored collection.
    await expect(client.db(target).collection('ledger_entries').insertOne({ _id: 'dup', idempotencyKey: 'k1' })).rejects.toThrow(
      /duplicate key/i,
    );
  });

  test('a tampered archive is refused before anything is written', async () => {
    const tampered = join(work, 'tampered');
    mkdirSync(tampered);
    writeFileSync(join(tampered, 'manifest.json'), readFileSync(join(folder, 'manifest.json')));
    const bytes = readFileSync(join(folder, 'wallet.bson.gz'));
    const middle = bytes.length >> 1;
    bytes[middle] = bytes[middle]! ^ 0x01;
    writeFileSync(join(tampered, 'wallet.bson.gz'), bytes);
    const target = unique('tampered');
    const run = cli(['restore', tampered], { WALLET_MONGO_DB: target });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/wallet\.bson\.gz: SHA-256 [0-9a-f]{64} is not the manifest's/);
    expect(await client.db(target).listCollections().toArray()).toEqual([]);
  });

  test('an archive whose counts disagree with its manifest is refused', async () => {
    const lying = join(work, 'lying');
    mkdirSync(lying);
    const edited = structuredClone(manifest);
    edited.databases[0]!.collections[1]!.documents = 1199;
    writeFileSync(join(lying, 'manifest.json'), JSON.stringify(edited));
    writeFileSync(join(lying, 'wallet.bson.gz'), readFileSync(join(folder, 'wallet.bson.gz')));
    const run = cli(['restore', lying], { WALLET_MONGO_DB: unique('lying') });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/ledger_entries has 1200 documents, the manifest says 1199/);
  });

  test('a non-empty target is refused, and --force replaces it', async () => {
    const target = unique('busy');
    await client.db(target).collection('wallets').insertOne({ _id: 'someone', availableMinor: 5 });
    const refused = cli(['restore', folder], { WALLET_MONGO_DB: target });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/database .* is not empty \(1 collections\).*--force/);
    expect(await client.db(target).collection('wallets').countDocuments()).toBe(1);
    ok(cli(['restore', folder, '--force'], { WALLET_MONGO_DB: target }));
    expect(await snapshot(target)).toEqual(await snapshot(source));
  });

  test('a database that changes under every dump attempt is refused, not copied half-way', async () => {
    const busy = unique('busy_writer');
    const db = client.db(busy);
    await db.collection('a').insertOne({ _id: 'first' });
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i += 1) await db.collection('a').insertOne({ _id: `w${i}`, at: new Date() });
    })();
    const dir = join(work, 'busy');
    const child = spawn(process.execPath, [tool, 'backup', '--services', 'review', '--dir', dir, '--attempts', '3'], {
      env: { ...process.env, MONGO_URL: mongoUrl, REVIEW_MONGO_DB: busy },
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const status = await new Promise((resolve) => child.once('close', resolve));
    writing = false;
    await writer;
    expect(status).toBe(1);
    expect(stderr).toMatch(/changed during each of 3 dump attempts: no consistent copy/);
    expect(existsSync(join(dir, 'review.bson.gz'))).toBe(false);
  });

  test('bad input gets a clear error', () => {
    expect(cli(['restore', join(work, 'nothing-here')]).stderr).toMatch(/has no manifest\.json: not a backup/);
    expect(cli(['backup', '--services', 'ledger']).stderr).toMatch(/--services: unknown ledger/);
    expect(cli(['backup', '--keep', '-1']).stderr).toMatch(/--keep takes a number/);
    expect(cli(['restore', folder, '--services', 'crm']).stderr).toMatch(/holds no crm database/);
  });
});

describe('encryption with age', () => {
  const tools = join(root, '.tools');
  let age: string;
  let keygen: string;
  // The project installs the pinned age itself (Go is on every machine it runs on): a failure to
  // is a failure, not a reason to skip.
  beforeAll(() => {
    age = ensureGoTool(tools, 'age', { module: 'filippo.io/age/cmd/age', version: 'v1.3.2' });
    keygen = ensureGoTool(tools, 'age-keygen', { module: 'filippo.io/age/cmd/age-keygen', version: 'v1.3.2' });
  }, 600_000);

  test('an encrypted backup restores with the identity only, and no key reaches the logs', async () => {
    const source = unique('age_src');
    await seed(source);
    const identity = join(work, 'identity.txt');
    execFileSync(keygen, ['-o', identity], { stdio: 'ignore' });
    const secret = readFileSync(identity, 'utf8').match(/AGE-SECRET-KEY-\S+/)![0];
    const recipient = execFileSync(keygen, ['-y', identity], { encoding: 'utf8' }).trim();
    const folder = join(work, 'encrypted');
    const env = { AGE: age, BACKUP_AGE_RECIPIENTS: recipient, WALLET_MONGO_DB: source };
    const made = ok(cli(['backup', '--services', 'wallet', '--dir', folder], env));
    const file = join(folder, 'wallet.bson.gz.age');
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file).subarray(0, 21).toString()).toBe('age-encryption.org/v1');
    expect(existsSync(join(folder, 'wallet.bson.gz'))).toBe(false);

    const target = unique('age_dst');
    const without = cli(['restore', folder], { AGE: age, WALLET_MONGO_DB: target });
    expect(without.stderr).toMatch(/is encrypted: give --identity/);
    const wrong = join(work, 'wrong.txt');
    execFileSync(keygen, ['-o', wrong], { stdio: 'ignore' });
    expect(cli(['restore', folder, '--identity', wrong], { AGE: age, WALLET_MONGO_DB: target }).stderr).toMatch(/age failed/);
    expect(await client.db(target).listCollections().toArray()).toEqual([]);

    const restored = ok(cli(['restore', folder, '--identity', identity], { AGE: age, WALLET_MONGO_DB: target }));
    expect(await snapshot(target)).toEqual(await snapshot(source));
    for (const output of [made.stdout, made.stderr, restored.stdout, restored.stderr]) {
      expect(output).not.toContain(secret);
      expect(output).not.toContain(recipient);
    }
  });
});

describe('retention', () => {
  test('keeps the newest N and those younger than D days, deletes the rest', () => {
    const rootDir = join(work, 'retained');
    const day = 86_400_000;
    const ages = [0.1, 1.5, 3, 10, 40];
    for (const [i, age] of ages.entries()) {
      mkdirSync(join(rootDir, `b${i}`), { recursive: true });
      writeFileSync(join(rootDir, `b${i}`, 'manifest.json'), JSON.stringify({ createdAt: new Date(Date.now() - age * day).toISOString() }));
    }
    mkdirSync(join(rootDir, 'not-a-backup'));
    ok(cli(['backup', 'prune', '--keep', '2', '--keep-days', '5'], { BACKUP_ROOT: rootDir }));
    expect(['b0', 'b1', 'b2', 'b3', 'b4', 'not-a-backup'].filter((name) => existsSync(join(rootDir, name)))).toEqual([
      'b0',
      'b1',
      'b2',
      'not-a-backup',
    ]);
    ok(cli(['backup', 'prune', '--keep', '1'], { BACKUP_ROOT: rootDir }));
    expect(['b0', 'b1', 'b2'].filter((name) => existsSync(join(rootDir, name)))).toEqual(['b0']);
  });
});
