#!/usr/bin/env node
// One hot wallet: how an op's cost and the wallet document's size grow with the wallet's own
// traffic. Credits of 1 santim are applied to one wallet through the wallet's application layer
// (WalletSteps, as every flow's step applies its op), BENCH_CONCURRENCY at a time, against a
// MongoDB-compatible server; at op 1k, 10k, 100k and 200k it prints the time per op over the
// last 1,000 ops and the document's BSON size.
//
// Two protocols, when the previous one can be built from git (BENCH_OLD_REF, default d1f2b77,
// the last commit that kept op ids on the wallet; empty to skip it):
//   new — the op decided by its ledger entry's unique op id (this checkout's services/wallet/dist);
//   old — op ids pushed onto the wallet (`appliedOps`, then `doneOps` with a date, dropped an hour
//         later), its src exported from git and compiled into services/wallet/dist/.previous/.
// Each protocol has BENCH_BUDGET_SECONDS (default 900) to reach the last checkpoint; what it did
// not reach in time (or failed at: a document past the server's size limit) shows as "—".
//
//   npm run build && npm run bench:wallet-ops
// Beside the wall time per op, the CPU this process spent per op in the same window (the wallet's
// code, mongoose and the driver; the database server is another process).
// MONGO_URL: the server (default: an embedded mongo-java-server in memory, as the tests use).
// BENCH_OPS (default 200000), BENCH_CONCURRENCY (default 8), BENCH_WALLETS (default 1: every op
// on one hot wallet; more spreads the ops round-robin over that many distinct wallets, the size
// column then being the first one's).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { messageOf } from '../scripts/lib/errors.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const walletDir = join(root, 'services', 'wallet');
const require = createRequire(join(walletDir, 'package.json'));
const mongoose = require('mongoose');
const pino = require('pino');

const OPS = Number(process.env.BENCH_OPS ?? 200_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const WALLETS = Number(process.env.BENCH_WALLETS ?? 1);
const BUDGET_MS = Number(process.env.BENCH_BUDGET_SECONDS ?? 900) * 1000;
const OLD_REF = process.env.BENCH_OLD_REF ?? 'd1f2b77';
const WINDOW = 1_000;
const CHECKPOINTS = [1_000, 10_000, 100_000, 200_000].filter((n) => n < OPS).concat(OPS);
const log = pino({ level: 'silent' });

/** The previous protocol's wallet, compiled from git into dist/.previous/<ref>/ (once per ref). */
function buildOld(ref) {
  const sha = execFileSync('git', ['rev-parse', '--short', ref], { cwd: root, encoding: 'utf8' }).trim();
  const dir = join(walletDir, 'dist', '.previous', sha);
  if (existsSync(join(dir, 'out', 'composition.js'))) return join(dir, 'out');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git archive ${sha} services/wallet/src | tar -x -C "${dir}" --strip-components=2`], { cwd: root });
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: join(root, 'tsconfig.base.json'),
      compilerOptions: { rootDir: 'src', outDir: 'out', composite: false, incremental: false, declaration: false, declarationMap: false },
      include: ['src'],
    }),
  );
  execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', dir], { cwd: dir, stdio: 'inherit' });
  return join(dir, 'out');
}

async function database() {
  if (process.env.MONGO_URL) return { url: process.env.MONGO_URL, stop: async () => undefined };
  const { startLocalMongo } = require(join(root, 'packages', 'infra', 'dist', 'mongo.js'));
  const server = await startLocalMongo({ kind: 'memory' }, () => undefined);
  if (!server) throw new Error('No MONGO_URL and no embedded server: see packages/infra');
  return { url: server.url, stop: () => server.stop() };
}

/** Applies OPS credits to one wallet with the protocol in `dist`; answers a row per checkpoint. */
async function run(name, dist, url) {
  const { walletModels } = require(join(dist, 'db', 'models.js'));
  const { WalletRepository } = require(join(dist, 'db', 'wallet.repository.js'));
  const { LedgerRepository } = require(join(dist, 'db', 'ledger.repository.js'));
  // The steps' file is `wallet.steps.js`; a build from before the one layout named it `wallet-steps.js`.
  const stepsFile = ['wallet.steps.js', 'wallet-steps.js'].map((file) => join(dist, 'application', file)).find((file) => existsSync(file));
  if (!stepsFile) throw new Error(`no wallet steps module in ${join(dist, 'application')}`);
  const { WalletSteps } = require(stepsFile);
  const connection = await mongoose.createConnection(url, { dbName: `bench-wallet-ops-${name}-${Date.now().toString(36)}` }).asPromise();
  const models = walletModels(connection);
  for (const model of Object.values(models)) await model.createIndexes();
  const wallets = new WalletRepository(models);
  const isNew = typeof wallets.escrow === 'function';
  const ledger = isNew ? new LedgerRepository(models, wallets, log) : new LedgerRepository(models, log);
  const steps = new WalletSteps(wallets, ledger);
  const opened = [];
  for (let i = 0; i < WALLETS; i += 1) {
    const suffix = WALLETS === 1 ? name : `${name}-${i}`;
    opened.push(await wallets.open(`bench-seller-${suffix}`, `MKT-USR-bench-${suffix}`, 'MKT'));
  }
  const wallet = opened[0];
  const db = connection.db;
  if (!db) throw new Error('the bench connection has no database');
  const size = async () => mongoose.mongo.BSON.calculateObjectSize((await db.collection('wallets').findOne({ _id: wallet._id })) ?? {});

  const rows = new Map();
  const deadline = Date.now() + BUDGET_MS;
  let applied = 0;
  /** @type {unknown} */
  let failure = null;
  const applyUntil = async (until) => {
    const worker = async () => {
      while (applied < until && !failure && Date.now() < deadline) {
        const n = (applied += 1);
        const work = {
          walletId: opened[n % WALLETS]._id,
          op: { opId: `bench:${n}`, type: 'transfer_credit', availableDeltaMinor: 1, heldDeltaMinor: 0, reference: `bench-${n}` },
        };
        try {
          // As a flow's step: apply, [the record records it], then the kind's `after`.
          await steps.after(await steps.apply(work), work);
        } catch (err) {
          failure = err;
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  };
  for (const checkpoint of CHECKPOINTS) {
    await applyUntil(checkpoint - WINDOW);
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    await applyUntil(checkpoint);
    const cpu = process.cpuUsage(cpuBefore);
    if (applied < checkpoint || failure) break;
    // cpuMsPerOp: this process's own CPU (the wallet's code, mongoose, the driver), not the server's.
    const cpuMsPerOp = (cpu.user + cpu.system) / 1000 / WINDOW;
    rows.set(checkpoint, { msPerOp: (performance.now() - started) / WINDOW, cpuMsPerOp, bytes: await size() });
    process.stderr.write(
      `[bench] ${name}: op ${checkpoint}: ${rows.get(checkpoint).msPerOp.toFixed(3)} ms/op, ${rows.get(checkpoint).bytes} bytes\n`,
    );
  }
  const lastBytes = await size().catch(() => null);
  await connection.dropDatabase().catch(() => undefined);
  await connection.close();
  const where = `op ${applied.toLocaleString('en')} (the wallet then ${lastBytes?.toLocaleString('en') ?? '?'} bytes)`;
  const stoppedAt = failure
    ? `failed at ${where}: ${messageOf(failure).slice(0, 80)}`
    : applied < OPS
      ? `out of time (BENCH_BUDGET_SECONDS) at ${where}`
      : null;
  return { rows, stoppedAt };
}

const db = await database();
// Stopped or interrupted, the server it started stops with it.
for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    void db.stop().finally(() => process.exit(130));
  });
try {
  const variants = [['new', join(walletDir, 'dist')]];
  if (OLD_REF) variants.push(['old', buildOld(OLD_REF)]);
  /** @type {Array<[string, Awaited<ReturnType<typeof run>>]>} */
  const results = [];
  for (const [name, dist] of variants) results.push([name, await run(name, dist, db.url)]);
  const cell = (result, checkpoint, key, digits) => {
    const row = result.rows.get(checkpoint);
    return row ? (digits === undefined ? row[key].toLocaleString('en') : row[key].toFixed(digits)) : '—';
  };
  const header = ['op', ...results.flatMap(([name]) => [`${name} ms/op`, `${name} CPU ms/op`, `${name} wallet bytes`])];
  const lines = [header, header.map(() => '---')];
  for (const checkpoint of CHECKPOINTS)
    lines.push([
      checkpoint.toLocaleString('en'),
      ...results.flatMap(([, r]) => [
        cell(r, checkpoint, 'msPerOp', 3),
        cell(r, checkpoint, 'cpuMsPerOp', 3),
        cell(r, checkpoint, 'bytes'),
      ]),
    ]);
  console.log(
    `${WALLETS === 1 ? 'One wallet' : `${WALLETS} wallets`}, ${OPS.toLocaleString('en')} credits, ${CONCURRENCY} at a time; ms/op over the 1,000 ops before each checkpoint\n`,
  );
  for (const line of lines) console.log(`| ${line.join(' | ')} |`);
  for (const [name, result] of results) if (result.stoppedAt) console.log(`\n${name}: ${result.stoppedAt}`);
} finally {
  await db.stop();
}
