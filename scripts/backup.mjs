#!/usr/bin/env node
// Backups of every service database, and their restore (README "Backups and restore").
//
//   npm run backup [-- --services wallet,crm] [--dir <folder>] [--attempts N] [--keep N] [--keep-days D]
//   npm run restore -- <backup folder | s3://bucket/prefix/name> [--services …] [--force] [--identity <age identity file>]
//   npm run backup -- prune [--keep N] [--keep-days D] [--s3-keep N] [--s3-keep-days D]
//   npm run backup -- list
//
// Our own dumper on the MongoDB driver the workspace already has: mongo-tools' mongodump cannot
// be fetched from any package registry this project installs from. One archive per database:
// a gzip of records, each a one-byte kind ('C' a collection: its options and index specs; 'D' one
// of its documents, as the server sent it; 'E' the end) followed by a BSON document (which starts
// with its own length). Documents are never turned into JavaScript values on the way out, and on
// the way back only into the driver's BSON wrappers (Decimal128, Long, Int32, Double, Binary,
// Timestamp, dates…), so every type comes back as it was. A manifest.json beside the archives
// names each database, its collections and document counts, the SHA-256 of its archive file and
// when its dump started and ended. Each database's dump is a consistent cut of that database
// (read twice, kept when both reads agree: see dumpDatabase); databases are dumped one after
// the other, so two databases are not cut at the same moment (the sagas between services, and
// the drill in e2e/test/backup-restore-drill.test.ts, deal with that).
//
// With age recipients (BACKUP_AGE_RECIPIENTS, or a recipients file BACKUP_AGE_RECIPIENTS_FILE)
// each archive is encrypted with `age -r …`; a restore decrypts with `age -d -i <identity>`
// (--identity or BACKUP_AGE_IDENTITY). Keys are never logged. age: $AGE, `age` on the PATH, or
// the pinned one installed with `go install filippo.io/age/cmd/age@v1.3.2` into .tools/go/.
//
// Where: MONGO_URL (default mongodb://127.0.0.1:27017), or <SERVICE>_MONGO_URL for one service;
// the database is <SERVICE>_MONGO_DB, else the service's name (as `npm start` names them). A
// restore writes into the database so named, or the one the manifest recorded when unset.
// MONGO_TLS_CA_FILE: TLS verified against that CA, as the services connect (kit's rule).
//
// With BACKUP_S3_BUCKET each backup is then copied to S3-compatible object storage (archives
// first, each sent with its SHA-256 for S3 to check, the manifest last); `restore` takes an
// s3://bucket/prefix/name as well as a folder, and the retention limits apply to the bucket too.
//
// Not done: point-in-time recovery (a dump is each database as it was during its own dump; the
// mongo-java-server of development has no oplog).
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createGunzip, createGzip } from 'node:zlib';
import { mongodb, mongoTls } from './lib/deps.mjs';
import { ensureGoTool } from './lib/go-tools.mjs';
import { messageOf } from './lib/errors.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { MongoClient, BSON } = mongodb(root);

export const TOOL_VERSION = '1.0.0';
export const FORMAT = 'mkt-backup/1';
export const SERVICES = ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'];
const AGE = { module: 'filippo.io/age/cmd/age', version: 'v1.3.2' };
const KIND = { collection: 0x43, document: 0x44, end: 0x45 };
// Read back as the driver's wrappers: an Int32 stays an Int32, a Long a Long, a Double a Double.
const RAW_VALUES = { promoteLongs: false, promoteValues: false, promoteBuffers: false, bsonRegExp: true };

const log = (line) => console.error(`[backup] ${line}`);

export class BackupError extends Error {}

// ---------------------------------------------------------------------------------------------
// Where each database is

/** service → `{ url, database }` from the environment (see the head of this file). */
export function targetsOf(services = SERVICES, env = process.env) {
  return services.map((service) => {
    const prefix = service.toUpperCase();
    return {
      service,
      url: env[`${prefix}_MONGO_URL`] ?? env.MONGO_URL ?? 'mongodb://127.0.0.1:27017',
      database: env[`${prefix}_MONGO_DB`] ?? null,
    };
  });
}

function parseServices(list) {
  const services = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = services.filter((s) => !SERVICES.includes(s));
  if (unknown.length > 0 || services.length === 0)
    throw new BackupError(`--services: unknown ${unknown.join(', ') || '(none)'}; one or more of ${SERVICES.join(', ')}`);
  return services;
}

// ---------------------------------------------------------------------------------------------
// age

/** The age binary: $AGE, or the pinned one (installed the first time). */
export function ageBinary(env = process.env) {
  // AGE names another build on purpose; otherwise the pinned release, never an age that PATH
  // happens to hold.
  if (env.AGE) return env.AGE;
  return ensureGoTool(join(root, '.tools'), 'age', AGE, log);
}

/** The `age` arguments naming the recipients, or null when none is configured. */
export function recipientArgs(env = process.env) {
  const listed = (env.BACKUP_AGE_RECIPIENTS ?? '').split(/[\s,]+/).filter(Boolean);
  const file = env.BACKUP_AGE_RECIPIENTS_FILE;
  if (file && !existsSync(file)) throw new BackupError(`BACKUP_AGE_RECIPIENTS_FILE names no file (${file})`);
  const args = [...listed.flatMap((r) => ['-r', r]), ...(file ? ['-R', file] : [])];
  return args.length > 0 ? args : null;
}

/** A child whose stdin and stdout are streamed; its failure (with its stderr) rejects `done`. */
function filter(command, args) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const done = new Promise((resolvePromise, reject) => {
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0
        ? resolvePromise(undefined)
        : reject(new BackupError(`age failed (exit ${code}): ${stderr.trim().split('\n').pop() ?? ''}`)),
    );
  });
  return { child, done };
}

// ---------------------------------------------------------------------------------------------
// The archive

function record(kind, doc) {
  return Buffer.concat([Buffer.from([kind]), Buffer.isBuffer(doc) ? doc : BSON.serialize(doc)]);
}

/** Yields `{ kind, body }` records (body: the BSON bytes) of a decompressed archive stream. */
async function* records(stream) {
  let pending = Buffer.alloc(0);
  for await (const chunk of stream) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let offset = 0;
    while (pending.length - offset >= 5) {
      const size = pending.readInt32LE(offset + 1);
      if (size < 5 || size > 64 * 1024 * 1024) throw new BackupError(`corrupt archive: a record of ${size} bytes`);
      if (pending.length - offset < 1 + size) break;
      yield { kind: pending[offset], body: pending.subarray(offset + 1, offset + 1 + size) };
      offset += 1 + size;
    }
    pending = pending.subarray(offset);
  }
  if (pending.length > 0) throw new BackupError('corrupt archive: it ends inside a record');
}

/**
 * Reads every collection of `db` once, in name order: its options, its index specs, then its
 * documents as raw BSON, each record handed to `emit` (when given). Returns the collections with
 * their counts and a SHA-256 of what was read (the content the consistency check compares).
 */
async function readDatabase(db, emit) {
  const hash = createHash('sha256');
  const out = async (kind, doc) => {
    const bytes = record(kind, doc);
    hash.update(bytes);
    if (emit) await emit(bytes);
  };
  const listed = await db.listCollections({}, { nameOnly: false }).toArray();
  const infos = listed
    .filter((c) => (c.type ?? 'collection') === 'collection' && !c.name.startsWith('system.'))
    .sort((a, b) => a.name.localeCompare(b.name));
  const collections = [];
  for (const info of infos) {
    const collection = db.collection(info.name);
    const indexes = (await collection.listIndexes().toArray()).filter((index) => index.name !== '_id_');
    await out(KIND.collection, { name: info.name, options: info.options ?? {}, indexes });
    let count = 0;
    for await (const raw of collection.find({}, { raw: true, sort: { _id: 1 } })) {
      await out(KIND.document, raw);
      count += 1;
    }
    collections.push({ name: info.name, documents: count, indexes: indexes.map((index) => index.name) });
  }
  await out(KIND.end, { collections: collections.length });
  return { collections, digest: hash.digest('hex') };
}

/** One pass written into `file` (gzip, then age when there are recipients). */
async function writePass(db, file, recipients) {
  const gzip = createGzip();
  let sink;
  let encryption = null;
  if (recipients) {
    encryption = filter(ageBinary(), [...recipients, '-o', file]);
    sink = pipeline(gzip, encryption.child.stdin).then(() => encryption.done);
  } else sink = pipeline(gzip, createWriteStream(file, { mode: 0o600 }));
  const write = (buffer) => (gzip.write(buffer) ? Promise.resolve() : new Promise((r) => gzip.once('drain', r)));
  try {
    const read = await readDatabase(db, write);
    gzip.end();
    await sink;
    return read;
  } catch (err) {
    gzip.destroy();
    encryption?.child.kill();
    await sink.catch(() => undefined);
    throw err;
  }
}

/**
 * Dumps one database into `file` as a consistent cut, without a snapshot from the server: the
 * pass written is read again at once, and kept only when the second read is identical. Pass one
 * reads collections C1…Cn at t1…tn, pass two at t1'…tn'; identical reads mean each Ci did not
 * change over [ti, ti'], so none changed over [tn, t1'] and the archive is the database as it
 * was then (the services' documents carry `updatedAt`, so a change undone between two reads
 * still differs). A database that keeps changing is tried `attempts` times, then refused.
 */
async function dumpDatabase(db, file, recipients, attempts) {
  const startedAt = new Date().toISOString();
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    const written = await writePass(db, file, recipients);
    const again = await readDatabase(db);
    if (again.digest === written.digest) {
      return { collections: written.collections, startedAt, endedAt: new Date().toISOString(), attempts: attempt, encrypted: !!recipients };
    }
    // Changed under the dump: a short random pause, then a fresh pass.
    await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 80)));
  }
  rmSync(file, { force: true });
  throw new BackupError(
    `${db.databaseName} changed during each of ${attempts} dump attempts: no consistent copy (raise --attempts, or back it up when quieter)`,
  );
}

export async function sha256Of(file) {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

// ---------------------------------------------------------------------------------------------
// backup

function timestamp(date = new Date()) {
  return date.toISOString().replace(/[:.]/g, '-');
}

export const backupsRoot = (env = process.env) => resolve(env.BACKUP_ROOT ?? join(root, '.dev/backups'));

/**
 * Dumps the databases of `services` into `dir` (created; a manifest already there gets these
 * databases added or replaced, so databases may be dumped at different moments into one backup).
 * @param {{ services?: string[], dir?: string, attempts?: number, env?: NodeJS.ProcessEnv }} [options]
 */
export async function backup({ services = SERVICES, dir, attempts = 50, env = process.env } = {}) {
  const folder = resolve(dir ?? env.BACKUP_DIR ?? join(backupsRoot(env), timestamp()));
  const targets = targetsOf(services, env);
  // A connection the services would refuse (verification off, a CA file that cannot be read) stops the backup before it writes.
  const tlsOf = new Map(targets.map((target) => [target.service, mongoTls(root, target.url, env)]));
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const recipients = recipientArgs(env);
  log(
    `writing to ${folder}${recipients ? ` (encrypted with age for ${recipients.length / 2} recipient argument(s))` : ' (not encrypted: no BACKUP_AGE_RECIPIENTS)'}`,
  );
  const manifestFile = join(folder, 'manifest.json');
  const manifest = existsSync(manifestFile)
    ? JSON.parse(readFileSync(manifestFile, 'utf8'))
    : { format: FORMAT, tool: `scripts/backup.mjs ${TOOL_VERSION}`, createdAt: new Date().toISOString(), databases: [] };
  for (const target of targets) {
    const database = target.database ?? target.service;
    const file = `${target.service}.bson.gz${recipients ? '.age' : ''}`;
    const client = new MongoClient(target.url, { serverSelectionTimeoutMS: 10_000, ...tlsOf.get(target.service) });
    try {
      await client.connect();
      const entry = await dumpDatabase(client.db(database), join(folder, file), recipients, attempts);
      const sha256 = await sha256Of(join(folder, file));
      manifest.databases = manifest.databases.filter((d) => d.service !== target.service);
      manifest.databases.push({ service: target.service, database, file, sha256, ...entry });
      const documents = entry.collections.reduce((sum, c) => sum + c.documents, 0);
      log(
        `${target.service}: ${database}, ${entry.collections.length} collections, ${documents} documents (consistent on attempt ${entry.attempts})`,
      );
    } finally {
      await client.close();
    }
  }
  manifest.databases.sort((a, b) => SERVICES.indexOf(a.service) - SERVICES.indexOf(b.service));
  manifest.completedAt = new Date().toISOString();
  writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
  return { folder, manifest };
}

// ---------------------------------------------------------------------------------------------
// retention

/**
 * Deletes the backups under `rootDir` (folders with a manifest.json) beyond every limit given:
 * one is kept while it is among the newest `keep`, or younger than `keepDays` days. With no limit
 * nothing is deleted; `protect` (the backup just made) is never deleted. Returns the deleted.
 * @param {{ rootDir: string, keep?: number, keepDays?: number, protect?: string, now?: number }} options
 */
export function prune({ rootDir, keep, keepDays, protect, now = Date.now() }) {
  if (keep === undefined && keepDays === undefined) return [];
  if (!existsSync(rootDir)) return [];
  const backups = readdirSync(rootDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(rootDir, entry.name, 'manifest.json')))
    .map((entry) => {
      const folder = join(rootDir, entry.name);
      const { createdAt } = JSON.parse(readFileSync(join(folder, 'manifest.json'), 'utf8'));
      return { folder, createdAt: Date.parse(createdAt) };
    })
    .sort((a, b) => b.createdAt - a.createdAt);
  const deleted = [];
  backups.forEach((b, index) => {
    const byCount = keep !== undefined && index < keep;
    const byAge = keepDays !== undefined && now - b.createdAt < keepDays * 86_400_000;
    if (byCount || byAge || (protect && resolve(protect) === b.folder)) return;
    rmSync(b.folder, { recursive: true, force: true });
    deleted.push(b.folder);
  });
  return deleted;
}

// ---------------------------------------------------------------------------------------------
// S3-compatible object storage

/**
 * The object store a backup is copied to, from the environment, or null when BACKUP_S3_BUCKET is
 * unset. Credentials come from the SDK's own chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY,
 * a web identity, an instance role) and are never logged.
 */
export function s3Config(env = process.env) {
  const bucket = env.BACKUP_S3_BUCKET;
  if (!bucket) return null;
  const endpoint = env.BACKUP_S3_ENDPOINT || undefined;
  let prefix = env.BACKUP_S3_PREFIX ?? '';
  if (prefix && !prefix.endsWith('/')) prefix += '/';
  const pathStyle = env.BACKUP_S3_FORCE_PATH_STYLE ?? (endpoint ? 'true' : 'false');
  return {
    bucket,
    prefix,
    endpoint,
    region: env.BACKUP_S3_REGION ?? env.AWS_REGION ?? 'us-east-1',
    forcePathStyle: pathStyle === 'true' || pathStyle === '1',
    allowPlaintext: env.BACKUP_S3_ALLOW_PLAINTEXT === 'true',
  };
}

async function s3Client(config) {
  const sdk = await import('@aws-sdk/client-s3');
  const client = new sdk.S3Client({
    region: config.region,
    endpoint: config.endpoint,
    forcePathStyle: config.forcePathStyle,
    // Checksums only where an operation needs them, and then the one we give (SHA-256 below):
    // what every S3-compatible server understands.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return { sdk, client };
}

const where = (config, key) => `s3://${config.bucket}/${key}`;

/** Parses `s3://bucket/prefix/name[/]` into `{ bucket, key }` (key: the backup's folder, with `/`). */
export function parseS3Url(url) {
  const match = /^s3:\/\/([^/]+)\/(.+?)\/?$/.exec(url);
  if (!match) throw new BackupError(`${url}: expected s3://<bucket>/<prefix><backup name>`);
  return { bucket: match[1], key: `${match[2]}/` };
}

/**
 * Copies a backup folder to `<prefix><folder name>/` in the bucket: the archives first, each sent
 * with the SHA-256 of its manifest entry (x-amz-checksum-sha256: S3 refuses a body that does not match), then
 * manifest.json, so a backup whose manifest is in the bucket is whole. Refuses archives that are
 * not age-encrypted unless BACKUP_S3_ALLOW_PLAINTEXT=true.
 */
export async function uploadBackup(folder, config) {
  const manifest = JSON.parse(readFileSync(join(folder, 'manifest.json'), 'utf8'));
  const plaintext = manifest.databases.filter((d) => !d.encrypted).map((d) => d.service);
  if (plaintext.length > 0 && !config.allowPlaintext)
    throw new BackupError(
      `not uploading ${basename(folder)}: ${plaintext.join(', ')} not encrypted (set BACKUP_AGE_RECIPIENTS, or BACKUP_S3_ALLOW_PLAINTEXT=true)`,
    );
  const { sdk, client } = await s3Client(config);
  const key = `${config.prefix}${basename(folder)}/`;
  try {
    for (const entry of manifest.databases) {
      const file = join(folder, entry.file);
      await client.send(
        new sdk.PutObjectCommand({
          Bucket: config.bucket,
          Key: `${key}${entry.file}`,
          Body: createReadStream(file),
          ContentLength: statSync(file).size,
          ChecksumSHA256: Buffer.from(entry.sha256, 'hex').toString('base64'),
        }),
      );
    }
    const body = readFileSync(join(folder, 'manifest.json'));
    await client.send(
      new sdk.PutObjectCommand({
        Bucket: config.bucket,
        Key: `${key}manifest.json`,
        Body: body,
        ContentType: 'application/json',
        ChecksumSHA256: createHash('sha256').update(body).digest('base64'),
      }),
    );
  } finally {
    client.destroy();
  }
  log(`uploaded ${manifest.databases.length} archive(s) and the manifest to ${where(config, key)}`);
  return { key, url: where(config, key) };
}

/** The backups in the bucket under the prefix (those with a manifest.json), newest first. */
export async function listS3Backups(config) {
  const { sdk, client } = await s3Client(config);
  try {
    const folders = [];
    let token;
    do {
      const page = await client.send(
        new sdk.ListObjectsV2Command({ Bucket: config.bucket, Prefix: config.prefix, Delimiter: '/', ContinuationToken: token }),
      );
      for (const { Prefix } of page.CommonPrefixes ?? []) folders.push(Prefix);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    const backups = [];
    for (const key of folders) {
      try {
        const got = await client.send(new sdk.GetObjectCommand({ Bucket: config.bucket, Key: `${key}manifest.json` }));
        const { createdAt } = JSON.parse((await got.Body?.transformToString()) ?? '{}');
        backups.push({ key, url: where(config, key), createdAt: Date.parse(createdAt) });
      } catch (err) {
        if (!(err instanceof Error) || err.name !== 'NoSuchKey') throw err; // no manifest: an upload cut short, not a backup
      }
    }
    return backups.sort((a, b) => b.createdAt - a.createdAt);
  } finally {
    client.destroy();
  }
}

/** Retention in the bucket, by the rules of `prune`: deletes whole backups (every object under each). */
export async function pruneS3({ config, keep, keepDays, protect, now = Date.now() }) {
  if (keep === undefined && keepDays === undefined) return [];
  const backups = await listS3Backups(config);
  const doomed = backups.filter((b, index) => {
    const byCount = keep !== undefined && index < keep;
    const byAge = keepDays !== undefined && now - b.createdAt < keepDays * 86_400_000;
    return !(byCount || byAge || b.key === protect);
  });
  if (doomed.length === 0) return [];
  const { sdk, client } = await s3Client(config);
  try {
    for (const backup of doomed) {
      // The manifest first: from then on the rest is an incomplete upload, never a backup.
      await client.send(new sdk.DeleteObjectCommand({ Bucket: config.bucket, Key: `${backup.key}manifest.json` }));
      let token;
      do {
        const page = await client.send(
          new sdk.ListObjectsV2Command({ Bucket: config.bucket, Prefix: backup.key, ContinuationToken: token }),
        );
        for (const { Key } of page.Contents ?? []) await client.send(new sdk.DeleteObjectCommand({ Bucket: config.bucket, Key }));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    }
  } finally {
    client.destroy();
  }
  return doomed.map((b) => b.url);
}

/**
 * Downloads the backup at `s3://bucket/key/` into `into` (a new folder) and returns that folder:
 * manifest.json, then each archive it names (only files of the backup's own folder). The restore
 * that follows checks every archive's SHA-256 against the manifest as for a local backup.
 */
export async function downloadBackup(url, into, config) {
  const { bucket, key } = parseS3Url(url);
  const { sdk, client } = await s3Client({ ...config, bucket });
  mkdirSync(into, { recursive: true, mode: 0o700 });
  const fetchTo = async (name) => {
    const got = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: `${key}${name}` }));
    // In Node the SDK answers the object's body as a Readable.
    await pipeline(/** @type {import('node:stream').Readable} */ (got.Body), createWriteStream(join(into, name), { mode: 0o600 }));
  };
  try {
    await fetchTo('manifest.json').catch((err) => {
      throw new BackupError(`${url}: no manifest.json (${err?.name ?? err}): not a whole backup`);
    });
    const manifest = JSON.parse(readFileSync(join(into, 'manifest.json'), 'utf8'));
    for (const entry of manifest.databases ?? []) {
      if (typeof entry.file !== 'string' || basename(entry.file) !== entry.file || entry.file.startsWith('.'))
        throw new BackupError(`the manifest names ${JSON.stringify(entry.file)}: only a file of the backup's own folder`);
      await fetchTo(entry.file);
    }
  } finally {
    client.destroy();
  }
  log(`downloaded ${url} into ${into}`);
  return into;
}

// ---------------------------------------------------------------------------------------------
// restore

/** The decompressed record stream of one archive (decrypted first when it is an age file). */
async function* archiveRecords(folder, entry, identity) {
  const file = join(folder, entry.file);
  const gunzip = createGunzip();
  let decryption = null;
  if (entry.encrypted) {
    if (!identity) throw new BackupError(`${entry.file} is encrypted: give --identity <file> or BACKUP_AGE_IDENTITY`);
    decryption = filter(ageBinary(), ['-d', '-i', identity, file]);
    decryption.child.stdin.end();
    decryption.child.stdout.pipe(gunzip);
    decryption.done.catch((err) => gunzip.destroy(err));
  } else
    createReadStream(file)
      .on('error', (err) => gunzip.destroy(err))
      .pipe(gunzip);
  try {
    yield* records(gunzip);
  } catch (err) {
    // A wrong identity ends the stream early: age's own reason is the one to tell.
    if (decryption) await decryption.done;
    throw err;
  }
  await decryption?.done;
}

/** Reads a whole archive and checks it against its manifest entry; changes nothing. */
async function verifyArchive(folder, entry, identity) {
  // The manifest names files of its own folder only, and a restore given a key restores only what
  // that key decrypts (a plaintext archive slipped into an encrypted backup is refused).
  if (typeof entry.file !== 'string' || basename(entry.file) !== entry.file || entry.file.startsWith('.'))
    throw new BackupError(`the manifest names ${JSON.stringify(entry.file)}: only a file of the backup's own folder`);
  if (identity && !entry.encrypted) throw new BackupError(`${entry.file} is not encrypted, but a key was given: refused`);
  const sha256 = await sha256Of(join(folder, entry.file));
  if (sha256 !== entry.sha256)
    throw new BackupError(`${entry.file}: SHA-256 ${sha256} is not the manifest's ${entry.sha256} (tampered or damaged)`);
  const counts = new Map();
  let current = null;
  let ended = false;
  for await (const { kind, body } of archiveRecords(folder, entry, identity)) {
    if (ended) throw new BackupError(`${entry.file}: records after its end`);
    if (kind === KIND.collection) {
      current = BSON.deserialize(body).name;
      counts.set(current, 0);
    } else if (kind === KIND.document) {
      if (current === null) throw new BackupError(`${entry.file}: a document before any collection`);
      counts.set(current, counts.get(current) + 1);
    } else if (kind === KIND.end) ended = true;
    else throw new BackupError(`${entry.file}: unknown record kind ${kind}`);
  }
  if (!ended) throw new BackupError(`${entry.file}: truncated (no end record)`);
  for (const { name, documents } of entry.collections) {
    if (counts.get(name) !== documents)
      throw new BackupError(`${entry.file}: ${name} has ${counts.get(name) ?? 0} documents, the manifest says ${documents}`);
  }
  if (counts.size !== entry.collections.length)
    throw new BackupError(`${entry.file}: ${counts.size} collections, the manifest says ${entry.collections.length}`);
}

function indexSpec(index) {
  const spec = { ...index };
  delete spec.v; // the server's own index version
  delete spec.ns; // the source's namespace: the target has its own
  return spec;
}

async function applyArchive(db, folder, entry, identity) {
  let collection = null;
  let batch = [];
  const flush = async () => {
    if (batch.length > 0) await collection.insertMany(batch, { ordered: true, checkKeys: false });
    batch = [];
  };
  for await (const { kind, body } of archiveRecords(folder, entry, identity)) {
    if (kind === KIND.collection) {
      await flush();
      const { name, options, indexes } = BSON.deserialize(body, RAW_VALUES);
      const plain = BSON.deserialize(BSON.serialize({ options }));
      collection = await db.createCollection(name, Object.keys(plain.options).length > 0 ? plain.options : undefined);
      // Indexes before documents: a unique index refuses a document that breaks it.
      if (indexes.length > 0) await collection.createIndexes(indexes.map(indexSpec));
    } else if (kind === KIND.document) {
      batch.push(BSON.deserialize(body, RAW_VALUES));
      if (batch.length >= 500) await flush();
    }
  }
  await flush();
}

/**
 * Restores `folder` into empty databases: every archive is verified first (SHA-256, then read
 * whole and counted against the manifest) before anything is written. A target database that has
 * collections is refused, unless `force` (then it is dropped first).
 */
export async function restore({ folder, services, force = false, identity, env = process.env }) {
  const manifestFile = join(folder, 'manifest.json');
  if (!existsSync(manifestFile)) throw new BackupError(`${folder} has no manifest.json: not a backup`);
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
  if (manifest.format !== FORMAT) throw new BackupError(`${folder}: format ${manifest.format}, this tool reads ${FORMAT}`);
  const wanted = services ?? manifest.databases.map((d) => d.service);
  const entries = wanted.map((service) => {
    const entry = manifest.databases.find((d) => d.service === service);
    if (!entry) throw new BackupError(`${folder} holds no ${service} database`);
    return entry;
  });
  identity = identity ?? env.BACKUP_AGE_IDENTITY;
  for (const entry of entries) await verifyArchive(folder, entry, identity);
  log(`verified ${entries.length} archive(s) of ${folder}`);
  const targets = targetsOf(wanted, env);
  const clients = [];
  try {
    const plan = [];
    for (const [i, entry] of entries.entries()) {
      const client = new MongoClient(targets[i].url, { serverSelectionTimeoutMS: 10_000, ...mongoTls(root, targets[i].url, env) });
      clients.push(client);
      await client.connect();
      const database = targets[i].database ?? entry.database;
      // A manifest cannot send one service's archive into another service's database.
      if (SERVICES.includes(database) && database !== entry.service)
        throw new BackupError(`${entry.service}: the manifest names the database ${database}, another service's: refused`);
      if (plan.some((planned) => planned.database === database))
        throw new BackupError(`${entry.service}: the database ${database} is named twice: refused`);
      const db = client.db(database);
      const existing = (await db.listCollections({}, { nameOnly: true }).toArray()).filter((c) => !c.name.startsWith('system.'));
      if (existing.length > 0 && !force) {
        throw new BackupError(
          `${entry.service}: database ${database} is not empty (${existing.length} collections); restore needs an empty one, or --force to drop it first`,
        );
      }
      plan.push({ entry, db, database, drop: existing.length > 0 });
    }
    const restored = [];
    for (const { entry, db, database, drop } of plan) {
      if (drop) await db.dropDatabase();
      const startedAt = Date.now();
      try {
        await applyArchive(db, folder, entry, identity);
      } catch (err) {
        throw new BackupError(
          `${entry.service}: restore into ${database} stopped half-way (drop it before another attempt): ${messageOf(err)}`,
        );
      }
      for (const { name, documents } of entry.collections) {
        const count = await db.collection(name).countDocuments();
        if (count !== documents)
          throw new BackupError(
            `${entry.service}: ${database}.${name} has ${count} documents after the restore, the manifest says ${documents}`,
          );
      }
      const ms = Date.now() - startedAt;
      log(`${entry.service}: restored into ${database} in ${ms} ms`);
      restored.push({ service: entry.service, database, ms, documents: entry.collections.reduce((s, c) => s + c.documents, 0) });
    }
    return { manifest, restored };
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
}

// ---------------------------------------------------------------------------------------------
// The command line

const USAGE = `usage:
  npm run backup [-- [--services a,b] [--dir <folder>] [--attempts N] [--keep N] [--keep-days D] [--s3-keep N] [--s3-keep-days D]]
  npm run backup -- prune [--keep N] [--keep-days D] [--s3-keep N] [--s3-keep-days D]
  npm run backup -- list
  npm run restore -- <backup folder | s3://bucket/prefix/name> [--services a,b] [--force] [--identity <age identity file>]

Environment: MONGO_URL (or <SERVICE>_MONGO_URL, <SERVICE>_MONGO_DB), MONGO_TLS_CA_FILE, BACKUP_ROOT, BACKUP_DIR,
BACKUP_AGE_RECIPIENTS or BACKUP_AGE_RECIPIENTS_FILE, BACKUP_AGE_IDENTITY; with BACKUP_S3_BUCKET
each backup is also copied to S3-compatible storage (BACKUP_S3_ENDPOINT, BACKUP_S3_REGION,
BACKUP_S3_PREFIX, BACKUP_S3_FORCE_PATH_STYLE, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).`;

function parseArgs(argv) {
  const options = { positional: /** @type {string[]} */ ([]) };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new BackupError(`${arg} needs a value\n${USAGE}`);
      return v;
    };
    const number = () => {
      const n = Number(value());
      if (!Number.isFinite(n) || n < 0) throw new BackupError(`${arg} takes a number ≥ 0\n${USAGE}`);
      return n;
    };
    if (arg === '--services') options.services = parseServices(value());
    else if (arg === '--dir') options.dir = value();
    else if (arg === '--keep') options.keep = number();
    else if (arg === '--keep-days') options.keepDays = number();
    else if (arg === '--s3-keep') options.s3Keep = number();
    else if (arg === '--s3-keep-days') options.s3KeepDays = number();
    else if (arg === '--attempts') options.attempts = Math.max(1, number());
    else if (arg === '--force') options.force = true;
    else if (arg === '--identity') options.identity = value();
    else if (arg === '--help' || arg === '-h') options.help = true;
    else if (arg.startsWith('-')) throw new BackupError(`unknown option ${arg}\n${USAGE}`);
    else options.positional.push(arg);
  }
  return options;
}

/** The bucket's retention: --s3-keep / --s3-keep-days, else the local limits. */
async function pruneBucket(config, options, protect) {
  if (!config) return;
  const keep = options.s3Keep ?? options.keep;
  const keepDays = options.s3KeepDays ?? options.keepDays;
  const deleted = await pruneS3({ config, keep, keepDays, protect });
  if (deleted.length > 0) log(`retention: deleted ${deleted.length} backup(s) in the bucket`);
}

async function main(argv) {
  const [command, ...rest] = argv;
  const options = parseArgs(rest);
  // A subcommand that does not exist fails even with --help (the runbook test relies on it).
  const known =
    (command === 'backup' &&
      (options.positional.length === 0 || (options.positional.length === 1 && ['prune', 'list'].includes(options.positional[0])))) ||
    (command === 'restore' && options.positional.length <= 1);
  if (!known) throw new BackupError(`unknown command: ${[command, ...options.positional].join(' ')}\n${USAGE}`);
  if (options.help) {
    console.log(USAGE);
    return;
  }
  const s3 = s3Config();
  if (command === 'backup' && options.positional[0] === 'prune' && options.positional.length === 1) {
    const deleted = prune({ rootDir: backupsRoot(), keep: options.keep, keepDays: options.keepDays });
    log(`pruned ${deleted.length} backup(s)`);
    await pruneBucket(s3, options);
  } else if (command === 'backup' && options.positional[0] === 'list' && options.positional.length === 1) {
    const rootDir = backupsRoot();
    const local = existsSync(rootDir)
      ? readdirSync(rootDir)
          .filter((name) => existsSync(join(rootDir, name, 'manifest.json')))
          .sort()
          .reverse()
      : [];
    for (const name of local) console.log(join(rootDir, name));
    if (s3) for (const { url } of await listS3Backups(s3)) console.log(url);
  } else if (command === 'backup' && options.positional.length === 0) {
    const { folder } = await backup({ services: options.services, dir: options.dir, attempts: options.attempts });
    const uploaded = s3 ? await uploadBackup(folder, s3) : null;
    const deleted = prune({ rootDir: backupsRoot(), keep: options.keep, keepDays: options.keepDays, protect: folder });
    if (deleted.length > 0) log(`retention: deleted ${deleted.length} older backup(s)`);
    await pruneBucket(s3, options, uploaded?.key);
    console.log(folder);
    if (uploaded) console.log(uploaded.url);
  } else if (command === 'restore' && options.positional.length === 1) {
    const source = options.positional[0];
    let folder = resolve(source);
    let downloaded = null;
    if (source.startsWith('s3://')) {
      const base = process.env.BACKUP_DOWNLOAD_DIR ?? tmpdir();
      mkdirSync(base, { recursive: true });
      downloaded = mkdtempSync(join(base, 'restore-'));
      folder = await downloadBackup(source, downloaded, s3 ?? s3Config({ ...process.env, BACKUP_S3_BUCKET: parseS3Url(source).bucket }));
    }
    try {
      const { restored } = await restore({ folder, services: options.services, force: options.force, identity: options.identity });
      console.log(JSON.stringify({ restored }));
    } finally {
      if (downloaded) rmSync(downloaded, { recursive: true, force: true });
    }
  } else throw new BackupError(USAGE);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err) => {
    console.error(`[backup] ${err instanceof BackupError ? err.message : (err.stack ?? err)}`);
    process.exit(1);
  });
}
