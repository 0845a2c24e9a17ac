import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

// The S3 copy of backups (scripts/backup.mjs) against a real S3-compatible server: moto's, from
// PyPI (scripts/lib/moto.mjs), on 127.0.0.1. What goes into the bucket is encrypted and whole, a
// restore from the bucket gives back the database, the bucket's retention deletes whole backups,
// and a tampered object is refused before anything is written.
const root = join(__dirname, '..', '..');
/* eslint-disable @typescript-eslint/no-require-imports -- ES modules, loaded through SWC as CommonJS (scripts/jest.config.js) */
const { ensureGoTool } = require('../lib/go-tools.mjs') as {
  ensureGoTool: (toolsDir: string, name: string, tool: { module: string; version: string }) => string;
};
const { startMoto } = require('../lib/moto.mjs') as {
  startMoto: (toolsDir: string) => Promise<{ endpoint: string; stop: () => Promise<void> }>;
};
/* eslint-enable @typescript-eslint/no-require-imports */
const tool = join(root, 'scripts', 'backup.mjs');
const { MongoClient } = createRequire(join(root, 'packages', 'kit', 'package.json'))('mongoose').mongo;
const mongoUrl = process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27017';
const work = mkdtempSync(join(tmpdir(), 'backup-s3-test-'));
const client = new MongoClient(mongoUrl);
const tools = join(root, '.tools');
const credentials = { accessKeyId: 'test-access-key', secretAccessKey: 'test-secret-key-not-logged' };

let moto: { endpoint: string; stop: () => Promise<void> };
let s3: S3Client;
let age: string;
let identity: string;
let recipient: string;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Run {
  const result = spawnSync(process.execPath, [tool, ...args], {
    env: {
      ...process.env,
      MONGO_URL: mongoUrl,
      AGE: age,
      BACKUP_S3_ENDPOINT: moto.endpoint,
      BACKUP_S3_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      BACKUP_ROOT: join(work, 'local'),
      ...env,
    },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function ok(run: Run): Run {
  if (run.status !== 0) throw new Error(`backup.mjs exited ${run.status}: ${run.stderr}`);
  return run;
}

const unique = (name: string) => `s3_${name}_${randomBytes(4).toString('hex')}`;

async function newBucket(): Promise<string> {
  const bucket = `mkt-backups-${randomBytes(4).toString('hex')}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

async function keys(bucket: string, prefix = ''): Promise<string[]> {
  const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (page.Contents ?? []).map((entry) => entry.Key!).sort();
}

async function object(bucket: string, key: string): Promise<Buffer> {
  const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await got.Body!.transformToByteArray());
}

async function seed(dbName: string, count = 25) {
  const db = client.db(dbName);
  await db.collection('ledger').createIndex({ idempotencyKey: 1 }, { unique: true });
  await db
    .collection('ledger')
    .insertMany(Array.from({ length: count }, (_, i) => ({ _id: `e${i}`, idempotencyKey: `k${i}`, amountMinor: i * 100 })));
}

async function documents(dbName: string) {
  return client
    .db(dbName)
    .collection('ledger')
    .find({}, { sort: { _id: 1 } })
    .toArray();
}

beforeAll(async () => {
  await client.connect();
  // The project installs its pinned tools itself: a failure to is a failure, not a skip.
  age = ensureGoTool(tools, 'age', { module: 'filippo.io/age/cmd/age', version: 'v1.3.2' });
  const keygen = ensureGoTool(tools, 'age-keygen', { module: 'filippo.io/age/cmd/age-keygen', version: 'v1.3.2' });
  identity = join(work, 'identity.txt');
  execFileSync(keygen, ['-o', identity], { stdio: 'ignore' });
  recipient = execFileSync(keygen, ['-y', identity], { encoding: 'utf8' }).trim();
  moto = await startMoto(tools);
  s3 = new S3Client({ endpoint: moto.endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
}, 900_000);

afterAll(async () => {
  s3?.destroy();
  await moto?.stop();
  await client.close();
  rmSync(work, { recursive: true, force: true });
});

describe('backups copied to S3-compatible storage', () => {
  test('a backup lands in the bucket encrypted and whole, and restores from there', async () => {
    const source = unique('src');
    await seed(source);
    const bucket = await newBucket();
    const env = { BACKUP_S3_BUCKET: bucket, BACKUP_S3_PREFIX: 'prod/daily', BACKUP_AGE_RECIPIENTS: recipient, WALLET_MONGO_DB: source };
    const made = ok(cli(['backup', '--services', 'wallet'], env));
    const [folder, url] = made.stdout.trim().split('\n');
    const name = folder!.split('/').pop()!;
    expect(url).toBe(`s3://${bucket}/prod/daily/${name}/`);
    expect(await keys(bucket)).toEqual([`prod/daily/${name}/manifest.json`, `prod/daily/${name}/wallet.bson.gz.age`]);
    // What the bucket holds is what the manifest names, byte for byte, and it is age ciphertext.
    const manifest = JSON.parse((await object(bucket, `prod/daily/${name}/manifest.json`)).toString('utf8'));
    const archive = await object(bucket, `prod/daily/${name}/wallet.bson.gz.age`);
    expect(createHash('sha256').update(archive).digest('hex')).toBe(manifest.databases[0].sha256);
    expect(archive.subarray(0, 21).toString()).toBe('age-encryption.org/v1');
    // No credential or key in what it printed.
    for (const secret of [credentials.secretAccessKey, readFileSync(identity, 'utf8').match(/AGE-SECRET-KEY-\S+/)![0]])
      expect(made.stdout + made.stderr).not.toContain(secret);

    expect(ok(cli(['backup', 'list'], env)).stdout).toContain(url);

    // Restore from the bucket alone: the local folder is gone.
    rmSync(folder!, { recursive: true, force: true });
    const target = unique('dst');
    const restored = ok(cli(['restore', url!, '--identity', identity], { ...env, WALLET_MONGO_DB: target }));
    expect(JSON.parse(restored.stdout.trim()).restored).toEqual([
      expect.objectContaining({ service: 'wallet', database: target, documents: 25 }),
    ]);
    expect(await documents(target)).toEqual(await documents(source));
    const indexes = await client.db(target).collection('ledger').indexes();
    expect(indexes.find((index: { name: string }) => index.name === 'idempotencyKey_1')).toMatchObject({ unique: true });
  });

  test('plaintext archives are not uploaded unless explicitly allowed', async () => {
    const source = unique('plain');
    await seed(source, 3);
    const bucket = await newBucket();
    const refused = cli(['backup', '--services', 'wallet'], { BACKUP_S3_BUCKET: bucket, WALLET_MONGO_DB: source });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/not encrypted/);
    expect(await keys(bucket)).toEqual([]);
    const allowed = ok(
      cli(['backup', '--services', 'wallet'], { BACKUP_S3_BUCKET: bucket, BACKUP_S3_ALLOW_PLAINTEXT: 'true', WALLET_MONGO_DB: source }),
    );
    expect(allowed.stdout).toContain(`s3://${bucket}/`);
    expect((await keys(bucket)).some((key) => key.endsWith('/wallet.bson.gz'))).toBe(true);
  });

  test('the bucket keeps the newest backups within --s3-keep; an upload without its manifest is not a backup', async () => {
    const source = unique('ret');
    await seed(source, 2);
    const bucket = await newBucket();
    const env = { BACKUP_S3_BUCKET: bucket, BACKUP_AGE_RECIPIENTS: recipient, WALLET_MONGO_DB: source };
    // An upload cut short: archives, no manifest. Retention leaves it alone; list does not show it.
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'cut-short/wallet.bson.gz.age', Body: 'partial' }));
    const urls: string[] = [];
    for (let i = 0; i < 3; i += 1)
      urls.push(
        ok(cli(['backup', '--services', 'wallet', '--s3-keep', '2'], env))
          .stdout.trim()
          .split('\n')[1]!,
      );
    const listed = ok(cli(['backup', 'list'], env))
      .stdout.trim()
      .split('\n')
      .filter((line) => line.startsWith('s3://'));
    expect(listed).toEqual([urls[2], urls[1]]);
    const left = await keys(bucket);
    expect(left.filter((key) => key.startsWith(urls[0]!.replace(`s3://${bucket}/`, '')))).toEqual([]);
    expect(left).toContain('cut-short/wallet.bson.gz.age');
    // Retention alone, with the local limits standing for the bucket's.
    ok(cli(['backup', 'prune', '--keep', '1'], env));
    expect(
      ok(cli(['backup', 'list'], env))
        .stdout.trim()
        .split('\n')
        .filter((line) => line.startsWith('s3://')),
    ).toEqual([urls[2]]);
  });

  test('a tampered object in the bucket is refused before anything is written', async () => {
    const source = unique('tamper');
    await seed(source, 4);
    const bucket = await newBucket();
    const env = { BACKUP_S3_BUCKET: bucket, BACKUP_AGE_RECIPIENTS: recipient, WALLET_MONGO_DB: source };
    const url = ok(cli(['backup', '--services', 'wallet'], env))
      .stdout.trim()
      .split('\n')[1]!;
    const key = `${url.replace(`s3://${bucket}/`, '')}wallet.bson.gz.age`;
    const archive = await object(bucket, key);
    archive[archive.length - 1] = archive[archive.length - 1]! ^ 0xff;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: archive }));
    const target = unique('tamper_dst');
    const refused = cli(['restore', url, '--identity', identity], { ...env, WALLET_MONGO_DB: target });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/SHA-256 .* is not the manifest's/);
    expect(await client.db(target).listCollections().toArray()).toEqual([]);
  });

  test('a missing backup names the URL', () => {
    const refused = cli(['restore', 's3://no-such-bucket-here/nothing/'], {});
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/no manifest\.json/);
  });
});
