#!/usr/bin/env node
// `npm run clients:check` (node scripts/run.mjs clients): the OpenAPI document as client
// developers use it. Writes the document, generates a client with two mainstream
// generators and fails on any warning they give about it, compiles the TypeScript one under
// `tsc --strict`, then starts the whole system (scripts/system-env.mjs: sandbox payments, a seeded
// admin) and runs a short booking journey written against each generated client
// (clients/journeys/): register, rule set, pricing, consultation, approval by the admin, sandbox
// top-up, booking, listing, an error case.
//
//   openapi-generator 7.x `typescript-fetch`: the jar from Maven Central (checked against its
//     .sha1), cached in .tools/openapi-generator/; needs Java ≥ 11 (`java` on PATH).
//   openapi-python-client (PyPI), in a venv under .tools/openapi-python-client@<version>/.
//
//   node scripts/generated-clients.mjs            everything (what CI runs)
//   node scripts/generated-clients.mjs generate   the document and the two clients only, no system
//   node scripts/generated-clients.mjs serve      the whole system on free ports, until Ctrl-C (for
//                                                 `FUZZ_URL=… npm run fuzz` beside another run)
//
// Output under .dev/clients/: openapi.json, typescript/ (generated/, journey.ts, dist/), python/
// (marketplace_api_client/, journey.py), logs/ (the generators', the services').
/* global AbortSignal, Buffer */
import { spawn, spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, copyFileSync, existsSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { logClues } from './log-clues.mjs';
import { SERVICES, standaloneEnv, systemEnv } from './system-env.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

export const OPENAPI_GENERATOR_VERSION = '7.25.0';
export const PYTHON_CLIENT_VERSION = '0.29.1';
const JAR_URL = `https://repo1.maven.org/maven2/org/openapitools/openapi-generator-cli/${OPENAPI_GENERATOR_VERSION}/openapi-generator-cli-${OPENAPI_GENERATOR_VERSION}.jar`;
const JAR = join(root, '.tools', 'openapi-generator', `openapi-generator-cli-${OPENAPI_GENERATOR_VERSION}.jar`);
const VENV = join(root, '.tools', `openapi-python-client@${PYTHON_CLIENT_VERSION}`);
const OUT = join(root, '.dev', 'clients');
const LOGS = join(OUT, 'logs');
/**
 * The warnings that are about the generator, not the document: its 3.1 support is "beta", and its
 * 3.1 walk over the schemas looks up the name of a schema that has no `$ref` (ModelUtils.getSimpleRef
 * of null, logged once, naming no schema). It appeared as the document grew past 280 schemas and
 * points at none of them: bisecting the document by operations and by schemas found no part whose
 * removal silences it. The models are still generated, compiled under --strict and run through the
 * journey below, which is what would fail if a schema were lost.
 */
const BETA_NOTICE = /OpenAPI 3\.1 support is still in beta|ModelUtils - Failed to get the schema name: null$/;

const say = (line) => console.log(`[clients] ${line}`);
const seconds = (since) => ((Date.now() - since) / 1000).toFixed(1);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const rel = (path) => relative(root, path);

/**
 * Runs a command to the end; its output (both streams) returned and kept in `log`. Throws on a non-zero exit.
 * @param {string} command
 * @param {string[]} args
 * @param {{ log?: string, env?: NodeJS.ProcessEnv, cwd?: string }} [options]
 */
function run(command, args, { log, env = process.env, cwd = root } = {}) {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (log) writeFileSync(log, output);
  if (result.status !== 0) {
    const tail = output.trimEnd().split('\n').slice(-25).join('\n');
    throw new Error(`${command} ${args.join(' ')} exited ${result.status ?? result.signal}${log ? ` (log: ${rel(log)})` : ''}\n${tail}`);
  }
  return output;
}

// ---- tools

async function ensureJar() {
  if (existsSync(JAR)) return JAR;
  say(`downloading openapi-generator-cli ${OPENAPI_GENERATOR_VERSION} from Maven Central into ${rel(dirname(JAR))}/`);
  const fetchOk = async (url) => {
    const res = await fetch(url, { signal: AbortSignal.timeout(300_000) });
    if (!res.ok) throw new Error(`${url}: ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  };
  const [jar, sha1] = await Promise.all([fetchOk(JAR_URL), fetchOk(`${JAR_URL}.sha1`)]);
  const expected = sha1.toString('utf8').trim().split(/\s+/)[0];
  const actual = createHash('sha1').update(jar).digest('hex');
  if (actual !== expected) throw new Error(`${JAR_URL}: sha1 ${actual}, Maven Central says ${expected}`);
  mkdirSync(dirname(JAR), { recursive: true });
  const temp = `${JAR}.${process.pid}.tmp`;
  writeFileSync(temp, jar);
  renameSync(temp, JAR);
  return JAR;
}

function ensureJava() {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0)
    throw new Error('`java` is not on PATH: openapi-generator needs Java 11 or later (apt-get install openjdk-17-jre-headless)');
  return (result.stderr || result.stdout).split('\n')[0];
}

/** The venv with openapi-python-client (and what its generated clients import: httpx, attrs, dateutil). */
function ensurePythonClient() {
  const python = join(VENV, 'bin', 'python');
  const generator = join(VENV, 'bin', 'openapi-python-client');
  if (existsSync(generator)) return { python, generator };
  say(`installing openapi-python-client==${PYTHON_CLIENT_VERSION} from PyPI into ${rel(VENV)}/`);
  const temp = `${VENV}.${process.pid}.tmp`;
  rmSync(temp, { recursive: true, force: true });
  mkdirSync(dirname(VENV), { recursive: true });
  // Made in place (a venv's scripts name their own path): a failed install is removed.
  try {
    run('python3', ['-m', 'venv', VENV]);
    run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `openapi-python-client==${PYTHON_CLIENT_VERSION}`]);
  } catch (err) {
    rmSync(VENV, { recursive: true, force: true });
    throw err;
  }
  return { python, generator };
}

/**
 * A generator's lines that speak of the document: openapi-generator's WARN and ERROR lines but the
 * 3.1 notice, and every inline schema it had to name (INFO, but a schema the document left
 * anonymous); anything openapi-python-client calls a warning or an error (it prints nothing else
 * but "Generating …").
 */
function documentWarnings(output, generator) {
  const lines = output.split('\n').map((line) => line.trim());
  if (generator === 'openapi-generator')
    return lines.filter((line) => (/\] (WARN|ERROR) /.test(line) && !BETA_NOTICE.test(line)) || /Inline schema created/.test(line));
  return lines.filter((line) => /warning|error|skipping|unable|unsupported/i.test(line));
}

// ---- generation

/** The document as the gateway serves it (its `servers` the default public URL). */
function writeDocument() {
  const contracts = require(join(root, 'packages/contracts/dist/index.js'));
  const document = contracts.buildOpenApi();
  const file = join(OUT, 'openapi.json');
  writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);
  const operations = Object.values(document.paths).flatMap((methods) => Object.keys(methods)).length;
  say(`document: ${rel(file)} (${operations} operations, ${Object.keys(document.components.schemas).length} named schemas)`);
  return file;
}

async function generateTypeScript(document) {
  const started = Date.now();
  say(`openapi-generator ${OPENAPI_GENERATOR_VERSION} typescript-fetch (${ensureJava()})`);
  const jar = await ensureJar();
  const dir = join(OUT, 'typescript');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const log = join(LOGS, 'openapi-generator.log');
  const output = run('java', ['-jar', jar, 'generate', '-g', 'typescript-fetch', '-i', document, '-o', join(dir, 'generated')], { log });
  const warnings = documentWarnings(output, 'openapi-generator');
  const models = readdirSync(join(dir, 'generated', 'models')).filter((file) => file.endsWith('.ts') && file !== 'index.ts').length;
  say(`  ${models} models, ${warnings.length} warnings about the document (the 3.1-is-beta notice aside; log: ${rel(log)})`);
  if (warnings.length > 0) throw new Error(`openapi-generator warned about the document:\n  ${warnings.slice(0, 20).join('\n  ')}`);
  // The generated client and the journey written against it, under --strict.
  copyFileSync(join(root, 'clients/journeys/typescript/journey.ts'), join(dir, 'journey.ts'));
  const tsc = join(root, 'node_modules', '.bin', 'tsc');
  const flags = ['--strict', '--target', 'es2022', '--module', 'commonjs', '--moduleResolution', 'node', '--lib', 'es2022,dom'];
  const types = ['--types', 'node', '--typeRoots', join(root, 'node_modules', '@types')];
  run(tsc, [...flags, ...types, '--outDir', join(dir, 'dist'), join(dir, 'journey.ts')], { log: join(LOGS, 'tsc.log') });
  say(`  tsc --strict: the generated client and clients/journeys/typescript/journey.ts compile (${seconds(started)} s)`);
  return { run: (env) => run(process.execPath, [join(dir, 'dist', 'journey.js')], { env }) };
}

function generatePython(document) {
  const started = Date.now();
  const { python, generator } = ensurePythonClient();
  const dir = join(OUT, 'python');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const log = join(LOGS, 'openapi-python-client.log');
  // Its post hooks (ruff) run from the venv: the output formatted as a user would get it.
  const env = { ...process.env, PATH: `${join(VENV, 'bin')}:${process.env.PATH ?? ''}` };
  const output = run(
    generator,
    ['generate', '--path', document, '--output-path', join(dir, 'marketplace_api_client'), '--meta', 'none', '--overwrite'],
    { log, env },
  );
  const warnings = documentWarnings(output, 'openapi-python-client');
  const models = readdirSync(join(dir, 'marketplace_api_client', 'models')).filter((file) => file !== '__init__.py').length;
  say(`  openapi-python-client ${PYTHON_CLIENT_VERSION}: ${models} models, ${warnings.length} warnings (log: ${rel(log)})`);
  if (warnings.length > 0) throw new Error(`openapi-python-client warned about the document:\n  ${output.trim()}`);
  copyFileSync(join(root, 'clients/journeys/python/journey.py'), join(dir, 'journey.py'));
  run(python, ['-m', 'compileall', '-q', dir], { log: join(LOGS, 'python-compile.log') });
  say(`  the generated package and clients/journeys/python/journey.py compile (${seconds(started)} s)`);
  return { run: (journeyEnv) => run(python, [join(dir, 'journey.py')], { env: { ...journeyEnv, PYTHONPATH: dir } }) };
}

// ---- the whole system, on free ports (beside anything else running on this machine)

const children = new Set();
let infra = null;

/** @param {{ redirectOrigins?: string[] }} [options] */
async function startSystem({ redirectOrigins = [] } = {}) {
  const started = Date.now();
  const infraLib = require(join(root, 'packages/infra/dist/index.js'));
  infra = await infraLib.provideInfra({ say: (line) => say(line), mongoStorage: { kind: 'memory' } });
  const ports = Object.fromEntries(await Promise.all(SERVICES.map(async (service) => [service, await infraLib.freePort()])));
  const url = (service) => `http://127.0.0.1:${ports[service]}`;
  const keys = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const admin = { email: 'admin@clients.test', password: randomBytes(18).toString('base64url') };
  const runId = Date.now().toString(36);
  const envOf = systemEnv({
    url,
    mongoUrl: infra.mongoUrl,
    amqpUrl: infra.amqpUrl,
    namespace: `clients-${runId}`,
    database: (service) => `clients_${runId}_${service}`,
    keys,
    internalToken: randomBytes(32).toString('hex'),
    admin,
    // One client address makes every call: the per-address limits would answer 429, not the operation.
    unlimited: true,
    common: standaloneEnv('development'),
  });
  // `npm run fuzz` seeds top-ups back to http://localhost:3000 (as `npm start` allows).
  if (redirectOrigins.length > 0) envOf.wallet.CHECKOUT_REDIRECT_ORIGINS = [url('gateway'), ...redirectOrigins].join(',');
  const mine = new Map();
  for (const service of SERVICES) {
    const log = join(LOGS, `${service}.log`);
    const fd = openSync(log, 'w');
    const env = envOf[service];
    // Its database migrated first, as a release's migrate job does before its pods start.
    const migrate = spawnSync(process.execPath, [join(root, 'services', service, 'dist', 'migrate.js'), 'up'], {
      cwd: root,
      env,
      stdio: ['ignore', fd, fd],
    });
    if (migrate.status !== 0) throw new Error(`the migrations of ${service} failed (exit ${migrate.status}); see ${log}`);
    const child = spawn(process.execPath, [join(root, 'services', service, 'dist', 'main.js')], {
      cwd: root,
      env,
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    children.add(child);
    mine.set(service, child);
    child.once('exit', () => children.delete(child));
  }
  // Ready and connected to the broker (the first events need the consumers' queues declared).
  await Promise.all(
    SERVICES.map(async (service) => {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const child = mine.get(service);
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`${service} exited before it was ready:\n    ${logClues(join(LOGS, `${service}.log`), 12, true).join('\n    ')}`);
        const ready = await fetch(`${url(service)}/readyz`, { signal: AbortSignal.timeout(3_000) })
          .then(async (res) => (res.status === 200 ? /** @type {any} */ (await res.json()) : null))
          .catch(() => null);
        if (ready?.data?.checks?.broker === 'up') return;
        if (Date.now() > deadline) throw new Error(`${service} not ready (with its broker up) within 120 s`);
        await sleep(300);
      }
    }),
  );
  say(`system ready in ${seconds(started)} s: gateway ${url('gateway')} (logs: ${rel(LOGS)}/)`);
  return { base: url('gateway'), admin };
}

async function stopSystem() {
  const infraLib = require(join(root, 'packages/infra/dist/index.js'));
  await Promise.all([...children].map((child) => infraLib.stopProcess(child, 10_000)));
  await infra?.stop();
  infra = null;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    say(`${signal}: stopping`);
    stopSystem().finally(() => process.exit(130));
  });
}

async function main() {
  const mode = process.argv[2] ?? 'check';
  if (!['check', 'generate', 'serve'].includes(mode)) {
    console.error('usage: node scripts/generated-clients.mjs [check|generate|serve]');
    process.exit(2);
  }
  const begun = Date.now();
  mkdirSync(LOGS, { recursive: true });
  if (!existsSync(join(root, 'packages/contracts/dist/index.js')))
    throw new Error('packages/contracts/dist is missing: build first (pnpm exec tsc -b, or npm test)');
  if (mode === 'serve') {
    const { base, admin } = await startSystem({ redirectOrigins: ['http://localhost:3000'] });
    say(`FUZZ_URL=${base} ADMIN_EMAIL=${admin.email} ADMIN_PASSWORD=<in .dev/clients/serve.env>; Ctrl-C stops everything`);
    writeFileSync(join(OUT, 'serve.env'), `FUZZ_URL=${base}\nADMIN_EMAIL=${admin.email}\nADMIN_PASSWORD=${admin.password}\n`, {
      mode: 0o600,
    });
    await new Promise(() => undefined);
  }
  const document = writeDocument();
  const typescript = await generateTypeScript(document);
  const python = generatePython(document);
  if (mode === 'generate') return say(`generated and compiled in ${seconds(begun)} s`);
  const system = await startSystem();
  try {
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      MARKETPLACE_URL: system.base,
      ADMIN_EMAIL: system.admin.email,
      ADMIN_PASSWORD: system.admin.password,
    };
    /** @type {Array<[string, { run: (env: NodeJS.ProcessEnv) => string }]>} */
    const clients = [
      ['typescript-fetch', typescript],
      ['openapi-python-client', python],
    ];
    for (const [name, client] of clients) {
      const started = Date.now();
      say(`journey through the ${name} client:`);
      process.stdout.write(client.run(env));
      say(`  done in ${seconds(started)} s`);
    }
  } finally {
    await stopSystem();
  }
  say(`generated clients: both generated without warnings about the document, compiled, and ran the journey (${seconds(begun)} s)`);
}

main().then(
  () => process.exit(0),
  async (err) => {
    console.error(`[clients] FAILED: ${err.message}`);
    await stopSystem().catch(() => undefined);
    process.exit(1);
  },
);
