#!/usr/bin/env node
// `npm run test:mixed`: releases side by side, as a rolling update leaves them (docs/mixed-versions.md).
// For each service S asked for (default: consultation and wallet, the saga's two ends), two
// configurations on one database server and one broker:
//   a. the previous release of S beside the current others and the current gateway;
//   b. the current S beside the previous release of every other service, the gateway included;
// each through the journey of scripts/journey.mjs (bookings, payments, events, reviews). Each
// starts from real data, not empty databases: the previous release of every service runs alone
// first and fills them through the journey (users, consultations, paid bookings, reviews), the
// current release's migrations run (`dist/migrate.js up`), then the configuration runs on them.
// One more configuration, `rollback`, runs the previous release of every service on the migrated
// data (a rollback after an expand step).
//
//   node scripts/mixed-versions.mjs                                  # consultation and wallet
//   node scripts/mixed-versions.mjs --services crm --release crm@0.1.0
//   node scripts/mixed-versions.mjs --parallel 1 --settle            # one at a time; wait for the capture
//   node scripts/mixed-versions.mjs resolve wallet crm               # which release, which commit, found how
//
// The previous release of a service: its entry in release/releases.json (tag, else the commit
// recorded there, else the release commit found by its subject `release: …, <tag>, …`); without
// an entry, its newest `<name>@<version>` tag, else the newest release commit naming it. When the
// checkout is that release (HEAD is its release commit), the release before it is the previous
// one: the newest lower tag, else an earlier release commit, else the commit the parent's
// release/releases.json records. The output names each tag it took, at the start and in the
// summary. Each
// release commit is checked out once as a git worktree under .dev/mixed/<tag> (kept, and reused
// while at that commit), installed (pnpm, offline first) and built (tsc -b); the current services
// run from this checkout's dist/ (built here, incrementally). Every process this starts is stopped
// when it ends, fails or is interrupted; .dev/mixed/run.json names them for the next run should
// this one be killed. Logs: .dev/mixed/logs/. Exit 1 on any failure. Plain Node (the project's).
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
/* global AbortSignal */
import { journey } from './journey.mjs';
import { pnpm, toolEnv } from './lib/toolchain.mjs';
import { logClues } from './log-clues.mjs';
import { SERVICES, standaloneEnv, systemEnv } from './system-env.mjs';
import { messageOf } from './lib/errors.mjs';

const root = realpathSync(join(dirname(fileURLToPath(import.meta.url)), '..'));
const require = createRequire(import.meta.url);
const DEFAULT_SUBJECTS = ['consultation', 'wallet'];
const WORK = join(root, '.dev', 'mixed');
const LOGS = join(WORK, 'logs');
const RECORD = join(WORK, 'run.json');
const BUILT_STAMP = '.mixed-versions-built';

const say = (line) => console.log(`[mixed] ${line}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (since) => ((Date.now() - since) / 1000).toFixed(0);

// ---- secrets never reach the output
const secrets = new Set();
const redact = (text) => {
  let out = String(text);
  for (const secret of secrets) if (secret.length >= 8) out = out.split(secret).join('***');
  return out;
};

// ---- git and the releases
function git(repo, args, { check = true } = {}) {
  const result = spawnSync('git', ['-C', repo, ...args], { encoding: 'utf8' });
  if (result.status !== 0) {
    if (check) throw new Error(`git ${args.join(' ')}: ${(result.stderr || result.stdout).trim()}`);
    return null;
  }
  return result.stdout.trim();
}

/** The commit a revision names, or null when this clone does not have it. */
const commitOf = (repo, rev) => git(repo, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { check: false }) || null;
const escapeRegex = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** release/releases.json of the checkout (`{ "<name>": { version, tag, image?, commit } }`), or null. */
function readReleases(repo) {
  const file = join(repo, 'release', 'releases.json');
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`release/releases.json is not JSON: ${messageOf(err)}`);
  }
}

/**
 * The newest commit from `from` whose subject is `release: …` and names `tag` (or, with `name`, any `<name>@…`).
 * @param {string} repo
 * @param {{ tag?: string, name?: string, from?: string }} which
 */
function releaseCommit(repo, { tag, name, from = 'HEAD' }) {
  const wanted = tag ? escapeRegex(tag) : `${escapeRegex(name)}@[^, ]+`;
  const out = git(repo, ['log', from, '-E', `--grep=^release: (.+, )?${wanted}(,|$)`, '--format=%H%x09%s', '-n', '1'], {
    check: false,
  });
  if (!out) return null;
  const [commit, subject] = out.split('\t');
  // `--grep` reads every line of the message; the subject is the one that counts.
  const found = new RegExp(`^release: (?:.+, )?(${wanted})(?:,|$)`).exec(subject);
  return found ? { commit, tag: found[1] } : null;
}

/** `[major, minor, patch, prerelease]` of `<name>@<version>`, or null. */
function versionOf(tag) {
  const match = /@(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/.exec(tag);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3]), match[4] ?? null] : null;
}
function compareVersions(a, b) {
  for (let i = 0; i < 3; i += 1) if (a[i] !== b[i]) return a[i] - b[i];
  if (a[3] === b[3]) return 0;
  if (a[3] === null) return 1; // a release is newer than its prereleases
  if (b[3] === null) return -1;
  return a[3] < b[3] ? -1 : 1;
}

function newestTag(repo, name) {
  const tags = (git(repo, ['tag', '--list', `${name}@*`], { check: false }) ?? '')
    .split('\n')
    .filter((tag) => tag.startsWith(`${name}@`) && versionOf(tag));
  tags.sort((a, b) => compareVersions(versionOf(b), versionOf(a)));
  return tags[0] ?? null;
}

/**
 * The previous release of `name` in `repo`: `{ name, tag, commit, how }`. `wanted` (a tag such as
 * `crm@0.1.0`) asks for that release instead of the last one. Throws saying what it looked for.
 */
function resolveRelease(repo, name, wanted = null) {
  const found = lastRelease(repo, name, wanted);
  // This checkout is that release (its release commit): the one before it is the previous one.
  const head = commitOf(repo, 'HEAD');
  if (wanted || found.commit !== head) return found;
  const before = releaseBefore(repo, name, found.tag);
  if (before) return { ...before, how: `${before.how}; this checkout is ${found.tag}` };
  throw new Error(
    `${name}: this checkout is its release ${found.tag} and no release before it was found (no lower ${name}@* tag, ` +
      `no earlier "release: … ${name}@<version> …" commit, no commit recorded in the previous release/releases.json)`,
  );
}

/**
 * The release of `name` before `tag`, from a checkout at `tag`'s release commit: the newest
 * `<name>@<version>` tag of a lower version, else the newest earlier release commit naming it,
 * else the release the parent's release/releases.json records (the 0.1.0 baseline's commit).
 */
function releaseBefore(repo, name, tag) {
  const current = versionOf(tag);
  const lower = (git(repo, ['tag', '--list', `${name}@*`], { check: false }) ?? '')
    .split('\n')
    .filter((candidate) => candidate.startsWith(`${name}@`) && versionOf(candidate) && compareVersions(versionOf(candidate), current) < 0)
    .sort((a, b) => compareVersions(versionOf(b), versionOf(a)));
  if (lower[0]) return { name, tag: lower[0], commit: commitOf(repo, `refs/tags/${lower[0]}`), how: 'newest lower tag' };
  const released = releaseCommit(repo, { name, from: 'HEAD~1' });
  if (released) return { name, tag: released.tag, commit: released.commit, how: 'earlier release commit by its subject' };
  const parentReleases = git(repo, ['show', 'HEAD~1:release/releases.json'], { check: false });
  const entry = parentReleases ? (JSON.parse(parentReleases)[name] ?? null) : null;
  const recorded = entry?.commit ? commitOf(repo, entry.commit) : null;
  if (recorded)
    return {
      name,
      tag: entry.tag ?? `${name}@${entry.version}`,
      commit: recorded,
      how: 'commit recorded in the previous release/releases.json',
    };
  return null;
}

/** The last release of `name` the checkout records (or `wanted`), as resolveRelease returns it. */
function lastRelease(repo, name, wanted) {
  const releases = readReleases(repo);
  const entry = releases?.[name] ?? null;
  const entryTag = entry ? (entry.tag ?? `${name}@${entry.version}`) : null;
  const tag = wanted ?? entryTag;
  const from = wanted ? '--release' : 'release/releases.json';
  if (tag) {
    const tagged = commitOf(repo, `refs/tags/${tag}`);
    if (tagged) return { name, tag, commit: tagged, how: `tag (${from})` };
    const recorded = entryTag === tag && entry.commit ? commitOf(repo, entry.commit) : null;
    if (recorded) return { name, tag, commit: recorded, how: `commit recorded in release/releases.json (${from})` };
    const released = releaseCommit(repo, { tag });
    if (released) return { name, tag, commit: released.commit, how: `release commit by its subject (${from})` };
    throw new Error(
      `${name}: release ${tag} (${from}) not found: no tag ${tag}, no commit recorded for it in release/releases.json, ` +
        `no commit with the subject "release: … ${tag} …" (a shallow clone or one without tags? git fetch --tags --unshallow)`,
    );
  }
  const newest = newestTag(repo, name);
  if (newest) return { name, tag: newest, commit: commitOf(repo, `refs/tags/${newest}`), how: 'newest tag' };
  const released = releaseCommit(repo, { name });
  if (released) return { name, tag: released.tag, commit: released.commit, how: 'newest release commit by its subject' };
  throw new Error(
    `${name}: no previous release: no entry in release/releases.json, no tag ${name}@*, no commit with the subject ` +
      `"release: … ${name}@<version> …" (a clone without tags? git fetch --tags)`,
  );
}

// ---- the previous releases' worktrees
/** The worktrees of the repository: `[{ path, head }]`. */
function worktrees() {
  const entries = [];
  for (const block of (git(root, ['worktree', 'list', '--porcelain']) ?? '').split('\n\n')) {
    const path = /^worktree (.+)$/m.exec(block)?.[1];
    const head = /^HEAD ([0-9a-f]+)$/m.exec(block)?.[1];
    if (path) entries.push({ path, head });
  }
  return entries;
}

/** Runs a command with its output in `log`; throws with the log's tail on a non-zero exit. */
function runLogged(command, args, { cwd, log, env }) {
  return new Promise((resolve, reject) => {
    const fd = openSync(log, 'a');
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', fd, fd] });
    child.once('error', (err) => {
      closeSync(fd);
      reject(err);
    });
    child.once('exit', (code, signal) => {
      closeSync(fd);
      if (code === 0) return resolve(undefined);
      const tail = readFileSync(log, 'utf8').trimEnd().split('\n').slice(-20).join('\n');
      reject(
        new Error(
          `${command} ${args.join(' ')} (in ${relative(root, cwd) || '.'}) exited ${code ?? signal} (log: ${relative(root, log)})\n${tail}`,
        ),
      );
    });
  });
}

async function install(dir, log) {
  const pm = pnpm(dir);
  const env = toolEnv(process.env, dir);
  // From the local store when it has every package (CI's after `npm test`), else from the registry.
  await runLogged(pm, ['install', '--frozen-lockfile', '--offline', '--reporter=append-only'], { cwd: dir, log, env }).catch(async () => {
    say(`  ${relative(root, dir)}: the local store lacks packages; installing from the registry`);
    await runLogged(pm, ['install', '--frozen-lockfile', '--prefer-offline', '--reporter=append-only'], { cwd: dir, log, env });
  });
  return pm;
}

/**
 * The release at `commit` checked out, installed and built: a worktree under .dev/mixed/ already
 * at that commit (whatever its name), else .dev/mixed/<tag> made (or moved) there. Returns its path.
 */
async function prepareRelease({ tag, commit }) {
  mkdirSync(LOGS, { recursive: true });
  const mine = worktrees().filter(({ path }) => path.startsWith(`${WORK}${sep}`));
  let dir = mine.find(({ head }) => head === commit)?.path;
  const started = Date.now();
  if (!dir) {
    dir = join(WORK, tag);
    if (mine.some(({ path }) => path === dir)) {
      say(`worktree ${relative(root, dir)}: moving to ${commit.slice(0, 7)}`);
      git(dir, ['checkout', '--quiet', '--force', '--detach', commit]);
      rmSync(join(dir, BUILT_STAMP), { force: true });
    } else {
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true }); // a folder git no longer knows
      git(root, ['worktree', 'prune']);
      say(`worktree ${relative(root, dir)} at ${commit.slice(0, 7)}`);
      git(root, ['worktree', 'add', '--quiet', '--detach', dir, commit]);
    }
  }
  const stamp = `${commit} node ${process.versions.node}`;
  const built = existsSync(join(dir, BUILT_STAMP)) && readFileSync(join(dir, BUILT_STAMP), 'utf8').trim() === stamp;
  if (built && SERVICES.every((service) => existsSync(join(dir, 'services', service, 'dist', 'main.js')))) {
    say(`${relative(root, dir)}: built at ${commit.slice(0, 7)} (reused)`);
    return dir;
  }
  const log = join(LOGS, `build-${tag}.log`);
  rmSync(log, { force: true });
  say(`${relative(root, dir)}: pnpm install, tsc -b (log: ${relative(root, log)})`);
  const pm = await install(dir, log);
  await runLogged(pm, ['exec', 'tsc', '-b'], { cwd: dir, log, env: toolEnv(process.env, dir) });
  writeFileSync(join(dir, BUILT_STAMP), `${stamp}\n`);
  say(`${relative(root, dir)}: installed and built in ${seconds(started)} s`);
  return dir;
}

/**
 * This checkout built (`pnpm run build`: the SDK's types generated from the current contracts,
 * which the journey calls the API through, then tsc -b, incremental: a few seconds when nothing
 * changed).
 */
async function prepareCurrent() {
  const log = join(LOGS, 'build-current.log');
  rmSync(log, { force: true });
  const started = Date.now();
  if (!existsSync(join(root, 'node_modules'))) await install(root, log);
  await runLogged(process.execPath, [join(root, 'scripts/run.mjs'), 'build'], { cwd: root, log, env: toolEnv() });
  say(`current checkout built (pnpm run build) in ${seconds(started)} s`);
}

// ---- processes: every one we start is stopped at the end, and named in .dev/mixed/run.json
const children = new Set();
let infra = null;
let infraLib = null;
let recordEntries = [];

async function writeRecord() {
  const { identifyProcess } = infraLib;
  const identify = async (name, pid) => {
    const identity = await identifyProcess(pid);
    return identity ? { name, pid, identity } : null;
  };
  const processes = [...(infra?.processes() ?? []).map((server) => ({ name: `infra:${server.name}`, pid: server.pid })), ...recordEntries];
  const record = {
    runner: await identify('mixed-versions', process.pid),
    processes: (await Promise.all(processes.map(({ name, pid }) => identify(name, pid)))).filter(Boolean),
  };
  const temporary = `${RECORD}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(record, null, 2));
  renameSync(temporary, RECORD);
}

let cleaning = null;
function cleanUp() {
  cleaning ??= (async () => {
    await Promise.all([...children].map((child) => infraLib.stopProcess(child, 10_000)));
    if (infra) await infra.stop().catch((err) => say(`stopping the servers: ${err.message}`));
    infra = null;
    rmSync(RECORD, { force: true });
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    say(`${signal}: stopping everything this run started`);
    void cleanUp().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

// ---- one configuration
/** A log line as a failure's message shows it: secrets redacted, at most 400 characters. */
const clue = (line) => redact(line).slice(0, 400);

/**
 * A configuration from real data: the previous release of every service on its databases through
 * the journey (`seed`), the current migrations, then the configuration itself on those databases.
 * Resolves with one result (the seed's steps first, named `seed: …`); never throws.
 */
async function runConfiguration(config, options) {
  if (!config.seed) return runProcesses(config, options);
  // One admin for both: the seed's gateway makes it; the second keeps it (and its password).
  const admin = { email: `admin-${config.index}@marketplace.test`, password: randomBytes(18).toString('base64url') };
  config = { ...config, admin };
  const seeded = await runProcesses({ ...config, id: `${config.id}-seed`, versions: config.seed }, options);
  const seedSteps = seeded.steps.map((step) => ({ ...step, step: `seed: ${step.step}` }));
  if (!seeded.ok) return { ...seeded, config, steps: seedSteps, error: `filling the databases (previous release): ${seeded.error}` };
  const result = await runProcesses(config, { ...options, migrateWith: root });
  return { ...result, steps: [...seedSteps, ...result.steps], seconds: result.seconds + seeded.seconds };
}

/**
 * Each service's migrations (`dist/migrate.js up` of the checkout `dirOf(service)`, when it has
 * one: a release from before migrations builds its indexes at start) on the configuration's
 * databases. Throws with the failing one's output.
 */
async function migrateDatabases(dirOf, envOf) {
  for (const service of SERVICES) {
    const script = join(dirOf(service), 'services', service, 'dist', 'migrate.js');
    if (!existsSync(script)) continue;
    // Spawned, not spawnSync: the configurations run side by side in this one process, and a
    // synchronous migration (seconds on a loaded machine, six of them) stalled the others'
    // journeys until their requests timed out.
    const child = spawn(process.execPath, [script, 'up'], { cwd: dirOf(service), env: envOf(service), stdio: ['ignore', 'pipe', 'pipe'] });
    // Stopped with the services when the run is cancelled (before it stops the database).
    children.add(child);
    child.once('exit', () => children.delete(child));
    let output = '';
    const keep = (chunk) => {
      output = `${output}${chunk}`.slice(-8_000);
    };
    child.stdout.setEncoding('utf8').on('data', keep);
    child.stderr.setEncoding('utf8').on('data', keep);
    const status = await new Promise((resolve) => {
      child.once('error', (err) => resolve(messageOf(err)));
      child.once('close', (code, signal) => resolve(code ?? signal));
    });
    if (status !== 0) throw new Error(`the migrations of ${service} failed (${status}): ${redact(output).slice(-1_500)}`);
  }
}

/**
 * Starts the six processes of `config` (each from the checkout its version says) on `servers`,
 * their databases migrated first (by `migrateWith`'s migrations when given, else each version's
 * own), runs the journey through its gateway and stops them. Resolves with its result; never throws.
 */
async function runProcesses(config, { servers, keys, runId, settle, migrateWith = null }) {
  const started = Date.now();
  /** @type {{ config: any, ok: boolean, steps: { step: string, ok: boolean, seconds: number, detail: string }[], seconds: number, error: string | null, readySeconds: number | null, clues?: { service: string, lines: string[] }[], exits?: Record<string, number | string | null> }} */
  const result = { config, ok: false, steps: [], seconds: 0, error: null, readySeconds: null };
  const ports = Object.fromEntries(await Promise.all(SERVICES.map(async (service) => [service, await infraLib.freePort()])));
  const url = (service) => `http://127.0.0.1:${ports[service]}`;
  // One broker namespace and one database per service for the configuration: nothing it
  // publishes or stores meets another configuration's.
  const namespace = `mixed-${runId}-${config.index}`;
  const internalToken = randomBytes(32).toString('hex');
  const admin = config.admin ?? { email: `admin-${config.index}@marketplace.test`, password: randomBytes(18).toString('base64url') };
  secrets.add(internalToken);
  secrets.add(admin.password);
  const databaseOf = (service) => `mixed_${runId}_${config.index}_${service}`;
  const envOf = systemEnv({
    url,
    mongoUrl: servers.mongoUrl,
    amqpUrl: servers.amqpUrl,
    namespace,
    database: databaseOf,
    keys,
    internalToken,
    admin,
    unlimited: true,
    // Stopped at the end of the run: no load balancer to wait for.
    common: standaloneEnv('production'),
  });
  const mine = new Map();
  const logOf = (service) => join(LOGS, `${config.id}-${service}.log`);
  try {
    await migrateDatabases(
      (service) => migrateWith ?? config.versions[service].dir,
      (service) => ({ ...envOf[service], LOG_LEVEL: 'warn' }),
    );
    for (const service of SERVICES) {
      const { dir } = config.versions[service];
      const log = logOf(service);
      rmSync(log, { force: true });
      const fd = openSync(log, 'a');
      const child = spawn(process.execPath, [join(dir, 'services', service, 'dist', 'main.js')], {
        cwd: dir,
        env: envOf[service],
        stdio: ['ignore', fd, fd],
      });
      closeSync(fd);
      children.add(child);
      mine.set(service, child);
      child.once('exit', () => children.delete(child));
      recordEntries.push({ name: `${config.id}:${service}`, pid: child.pid });
    }
    await writeRecord();
    // Ready, and connected to the broker (`/readyz` is 200 without it: the outbox keeps events,
    // but the first event needs the consumers' queues declared).
    await Promise.all(
      SERVICES.map(async (service) => {
        const deadline = Date.now() + 120_000;
        for (;;) {
          const child = mine.get(service);
          if (child.exitCode !== null || child.signalCode !== null)
            throw new Error(
              `${service} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n    ${logClues(logOf(service), 12, true).map(clue).join('\n    ')}`,
            );
          const ready = await fetch(`${url(service)}/readyz`, { signal: AbortSignal.timeout(3_000) })
            .then(async (res) => (res.status === 200 ? /** @type {any} */ (await res.json()) : null))
            .catch(() => null);
          if (ready?.data?.checks?.broker === 'up') return;
          if (Date.now() > deadline) throw new Error(`${service} not ready (with its broker up) within 120 s`);
          await sleep(300);
        }
      }),
    );
    result.readySeconds = Number(seconds(started));
    const died = new Promise((_, reject) => {
      for (const [service, child] of mine)
        child.once('exit', (code, signal) => {
          if (!cleaning) reject(new Error(`${service} died during the journey (${code ?? signal})`));
        });
    });
    died.catch(() => undefined);
    const journeyLog = join(LOGS, `${config.id}-journey.log`);
    writeFileSync(journeyLog, '');
    const note = (line) => writeFileSync(journeyLog, `${new Date().toISOString()} ${line}\n`, { flag: 'a' });
    await Promise.race([journey(url('gateway'), admin, { say: note, redact, record: result.steps, settle }), died]);
    result.ok = true;
  } catch (err) {
    result.error = redact(messageOf(err));
    // The first clues for a CI log that keeps only this output (the whole logs stay in .dev/mixed/logs/).
    result.clues = SERVICES.map((service) => ({ service, lines: logClues(logOf(service), 4).map(clue) })).filter(
      ({ lines }) => lines.length > 0,
    );
  } finally {
    await Promise.all([...mine.values()].map((child) => infraLib.stopProcess(child, 10_000)));
    result.exits = Object.fromEntries([...mine].map(([service, child]) => [service, child.exitCode ?? child.signalCode]));
    result.seconds = Number(seconds(started));
  }
  return result;
}

// ---- output
function table(rows) {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  for (const [index, row] of rows.entries()) {
    console.log(`  ${row.map((cell, column) => String(cell).padEnd(widths[column])).join('  ')}`.trimEnd());
    if (index === 0) console.log(`  ${widths.map((width) => '-'.repeat(width)).join('  ')}`);
  }
}

function report(result) {
  const { config } = result;
  console.log('');
  say(
    `${config.id}: ${config.title} — ${result.ok ? 'ok' : 'FAILED'} in ${result.seconds} s (ready after ${result.readySeconds ?? '-'} s)`,
  );
  table([
    ['service', 'version', 'from'],
    ...SERVICES.map((service) => {
      const { label, dir } = config.versions[service];
      return [service, label, `${relative(root, join(dir, 'services', service, 'dist')) || '.'}`];
    }),
  ]);
  console.log('');
  const ran = new Set(result.steps.map(({ step }) => step));
  table([
    ['journey step', 'result', 'seconds', 'detail'],
    ...result.steps.map(({ step, ok, seconds: s, detail }) => [step, ok ? 'ok' : 'FAILED', s.toFixed(1), detail.slice(0, 160)]),
    ...(result.ok || ran.size > 0 ? [] : [['(services not ready)', 'FAILED', '-', '']]),
  ]);
  if (!result.ok) {
    say(`${config.id}: ${result.error.split('\n').slice(0, 12).join('\n    ')}`);
    for (const { service, lines } of result.clues ?? []) {
      say(`${config.id}: ${service}'s last warnings and errors (${relative(root, join(LOGS, `${config.id}-${service}.log`))})`);
      for (const line of lines) console.log(`    ${line}`);
    }
  }
  const unclean = Object.entries(result.exits ?? {}).filter(([, code]) => code !== 0);
  if (unclean.length > 0) say(`${config.id}: not exited 0 on SIGTERM: ${unclean.map(([s, code]) => `${s} ${code}`).join(', ')}`);
}

// ---- main
/**
 * Says how to run this (after `message`) and exits 2.
 * @param {string} [message]
 * @returns {never}
 */
function usage(message) {
  if (message) console.error(`[mixed] ${message}`);
  console.error(
    'usage: node scripts/mixed-versions.mjs [--services a,b] [--release <name>@<version> …] [--parallel n] [--settle]\n' +
      '       node scripts/mixed-versions.mjs resolve [--repo dir] [--release <name>@<version> …] <name> …',
  );
  process.exit(2);
}

function parse(argv) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        services: { type: 'string', multiple: true },
        release: { type: 'string', multiple: true },
        parallel: { type: 'string' },
        settle: { type: 'boolean', default: false },
        repo: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    return usage(messageOf(err));
  }
}

/** `--release crm@0.1.0 …` as `{ crm: 'crm@0.1.0' }`. */
function wantedReleases(values) {
  const wanted = {};
  for (const tag of values.release ?? []) {
    const name = tag.slice(0, tag.lastIndexOf('@'));
    if (!versionOf(tag) || !name) usage(`--release ${tag}: expected <name>@<major>.<minor>.<patch>`);
    wanted[name] = tag;
  }
  return wanted;
}

/** `resolve`: one JSON line per name (for a person, and for the tests of the resolution). */
/**
 * `resolve`: prints each named service's release (as JSON), then exits (1 when one is not found).
 * @param {{ values: { repo?: string, release?: string[] }, positionals: string[] }} args
 * @returns {never}
 */
function resolveCommand({ values, positionals }) {
  const repo = values.repo ? realpathSync(values.repo) : root;
  const wanted = wantedReleases(values);
  let failed = false;
  for (const name of positionals) {
    try {
      console.log(JSON.stringify(resolveRelease(repo, name, wanted[name] ?? null)));
    } catch (err) {
      console.error(`[mixed] ${messageOf(err)}`);
      failed = true;
    }
  }
  process.exit(failed ? 1 : 0);
}

async function main() {
  const args = parse(process.argv.slice(2));
  if (args.values.help) usage();
  if (args.positionals[0] === 'resolve') return resolveCommand({ values: args.values, positionals: args.positionals.slice(1) });
  if (args.positionals.length > 0) usage(`unknown argument ${args.positionals.join(' ')}`);
  const { values } = args;
  const subjects = values.services ? values.services.flatMap((list) => list.split(',')).filter(Boolean) : DEFAULT_SUBJECTS;
  const unknown = subjects.filter((name) => !(/** @type {readonly string[]} */ (SERVICES).includes(name)));
  if (unknown.length > 0) usage(`--services: unknown ${unknown.join(', ')} (one of ${SERVICES.join(', ')})`);
  const wanted = wantedReleases(values);
  const parallel = values.parallel === undefined ? Infinity : Number(values.parallel);
  if (!(parallel >= 1)) usage('--parallel: a number ≥ 1');
  const begun = Date.now();
  mkdirSync(LOGS, { recursive: true });

  // Which release each service was at last; one worktree per release commit.
  const previous = {};
  for (const service of SERVICES) {
    previous[service] = resolveRelease(root, service, wanted[service] ?? null);
    say(`previous ${service}: ${previous[service].tag} at ${previous[service].commit.slice(0, 7)} (${previous[service].how})`);
  }
  const head = git(root, ['rev-parse', '--short', 'HEAD']);
  const dirty = (git(root, ['status', '--porcelain', '--untracked-files=no']) ?? '') !== '';
  await prepareCurrent();
  const dirOf = new Map();
  // The subjects' releases first: a worktree is named after the first tag that needs it.
  for (const release of [...subjects, ...SERVICES].map((service) => previous[service])) {
    if (!dirOf.has(release.commit)) dirOf.set(release.commit, await prepareRelease(release));
  }

  const version = (service, which) =>
    which === 'current'
      ? { label: `current ${head}${dirty ? '+changes' : ''}`, dir: root }
      : { label: `${previous[service].tag} ${previous[service].commit.slice(0, 7)}`, dir: dirOf.get(previous[service].commit) };
  const allPrevious = Object.fromEntries(SERVICES.map((service) => [service, version(service, 'previous')]));
  const othersTags = (subject) =>
    SERVICES.filter((service) => service !== subject)
      .map((service) => previous[service].tag)
      .join(' ');
  const configurations = [];
  const seen = new Set();
  for (const subject of subjects) {
    for (const [suffix, title, subjectIs, othersAre] of [
      ['previous', `previous ${subject} (${previous[subject].tag}), current others (gateway included)`, 'previous', 'current'],
      ['current', `current ${subject}, previous others (gateway included): ${othersTags(subject)}`, 'current', 'previous'],
    ]) {
      const which = Object.fromEntries(SERVICES.map((service) => [service, service === subject ? subjectIs : othersAre]));
      const key = SERVICES.map((service) => which[service]).join();
      if (seen.has(key)) continue;
      seen.add(key);
      const versions = Object.fromEntries(SERVICES.map((service) => [service, version(service, which[service])]));
      configurations.push({ id: `${subject}-${suffix}`, index: configurations.length + 1, title, versions, seed: allPrevious });
    }
  }
  // A rollback after an expand step: the previous release of everything on the migrated data.
  configurations.push({
    id: 'rollback',
    index: configurations.length + 1,
    title: `previous release of every service on the data the current migrations migrated: ${SERVICES.map((service) => previous[service].tag).join(' ')}`,
    versions: allPrevious,
    seed: allPrevious,
  });

  // One database server and one broker for every configuration.
  infraLib = require(join(root, 'packages/infra/dist/index.js'));
  try {
    await infraLib.recoverLeftovers(RECORD, say);
  } catch (err) {
    throw new Error(messageOf(err).replace(/npm start/g, 'a mixed-version run'));
  }
  let started = Date.now();
  infra = await infraLib.provideInfra({ say: (line) => say(line), mongoStorage: { kind: 'memory' } });
  await writeRecord();
  say(`servers ready in ${seconds(started)} s`);
  const pair = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  secrets.add(pair.privateKey);
  const keys = { privateKey: pair.privateKey, publicKey: pair.publicKey };
  const runId = Date.now().toString(36);

  started = Date.now();
  say(
    `${configurations.length} configurations, ${Math.min(parallel, configurations.length)} at a time: ${configurations.map(({ id }) => id).join(', ')}`,
  );
  const results = [];
  const queue = [...configurations];
  await Promise.all(
    Array.from({ length: Math.min(parallel, configurations.length) }, async () => {
      while (queue.length > 0) {
        const config = queue.shift();
        if (!config) break;
        const result = await runConfiguration(config, { servers: infra, keys, runId, settle: values.settle });
        say(`${config.id}: ${result.ok ? 'ok' : 'FAILED'} in ${result.seconds} s`);
        results.push(result);
      }
    }),
  );
  results.sort((a, b) => a.config.index - b.config.index);
  for (const result of results) report(result);
  await cleanUp();
  console.log('');
  say('summary');
  table([
    ['configuration', 'result', 'seconds'],
    ...results.map(({ config, ok, seconds: s }) => [`${config.id}: ${config.title}`, ok ? 'ok' : 'FAILED', s]),
    ['total (builds, servers, configurations)', '', seconds(begun)],
  ]);
  say(
    `logs: ${relative(root, LOGS)}/; worktrees kept for the next run: ${[...new Set(dirOf.values())].map((dir) => relative(root, dir)).join(', ')}`,
  );
  return results.every(({ ok }) => ok) ? 0 : 1;
}

let code = 1;
try {
  code = await main();
} catch (err) {
  say(`failed: ${redact(messageOf(err))}`);
  code = 1;
}
await cleanUp();
process.exit(code);
