#!/usr/bin/env node
// Every `npm run` command of the project, on a fresh machine with only Node.js: on the pinned
// Node.js with the pinned pnpm (scripts/lib/toolchain.mjs), installed and built first, then
// `npm start` and `npm test` (MongoDB and RabbitMQ provided by packages/infra), or the script the
// mode names. Uses nothing but Node's own modules until the install is done.
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { onPinnedNode, pnpm, root, toolEnv } from './lib/toolchain.mjs';
import { messageOf } from './lib/errors.mjs';

const require = createRequire(import.meta.url);
const mode = process.argv[2];
const SERVICES = [
  { name: 'wallet', port: 8081 },
  { name: 'catalog', port: 8082 },
  { name: 'crm', port: 8083 },
  { name: 'consultation', port: 8084 },
  { name: 'review', port: 8085 },
];
/** @param {string} service */
const portOf = (service) => {
  const found = SERVICES.find(({ name }) => name === service);
  if (!found) throw new Error(`no service named ${service}`);
  return found.port;
};

// Every line of ours goes to stderr: stdout carries only what a caller redirects (`env > .env`).
const say = (line) => console.error(`[run] ${line}`);

function sh(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: toolEnv(), ...options });
  if (result.status !== 0) {
    const why = result.error?.message ?? `exit ${result.status ?? result.signal}`;
    console.error(`[run] ${command} ${args.join(' ')} failed (${why})`);
    process.exit(result.status || 1);
  }
}

/** The root build: the SDK's types from the current contracts, then every package (tsc -b). */
function build() {
  sh(process.execPath, [join(root, 'packages/client/scripts/generate.mjs')]);
  sh(pnpm(), ['exec', 'tsc', '-b']);
}

/**
 * Installs (the lockfile's versions) and builds the workspace, once per run: a command started by
 * one that did (RUN_PREPARED in its environment) skips it. Returns the pinned pnpm.
 */
function prepare() {
  const pm = pnpm();
  if (process.env.RUN_PREPARED === root) return pm;
  say('installing dependencies');
  sh(pm, ['install', '--frozen-lockfile', '--reporter=append-only']);
  say('building');
  build();
  process.env.RUN_PREPARED = root;
  return pm;
}

/** `npm start` keeps its data in .dev/data/ across restarts; the tests keep theirs in memory. */
async function provide(mongoStorage) {
  const { provideInfra } = require(join(root, 'packages/infra/dist/index.js'));
  return provideInfra({ say, mongoStorage });
}

function devKeys() {
  if (process.env.JWT_PRIVATE_KEY && process.env.JWT_PUBLIC_KEY) {
    return { privateKey: process.env.JWT_PRIVATE_KEY, publicKey: process.env.JWT_PUBLIC_KEY };
  }
  const dir = join(root, '.dev/keys');
  const privatePath = join(dir, 'jwt-private.pem');
  const publicPath = join(dir, 'jwt-public.pem');
  if (!existsSync(privatePath)) {
    say('generating a development RS256 key pair in .dev/keys/');
    mkdirSync(dir, { recursive: true });
    const pair = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    writeFileSync(privatePath, pair.privateKey, { mode: 0o600 });
    writeFileSync(publicPath, pair.publicKey);
  }
  return { privateKey: readFileSync(privatePath, 'utf8'), publicKey: readFileSync(publicPath, 'utf8') };
}

/**
 * The environment of every service, and the gateway's on top (URLs, keys, the admin).
 * @param {any} infra packages/infra's provideInfra() result
 * @param {{ privateKey: string, publicKey: string }} keys
 * @param {(name: string) => string} [mongoUrlOf] MONGO_URL of each process (default: the infra's)
 */
function serviceSet(infra, keys, mongoUrlOf = () => infra.mongoUrl) {
  const base = {
    ...process.env,
    NODE_ENV: process.env.NODE_ENV ?? 'development',
    // A laptop's services answer this machine only: containers keep kit's default of
    // every interface, as they must to be reached.
    HOST: process.env.HOST ?? '127.0.0.1',
    MONGO_URL: infra.mongoUrl,
    AMQP_URL: infra.amqpUrl,
    JWT_PUBLIC_KEY: keys.publicKey,
    // A key directory (JWT_KEYS_DIR, docs/key-rotation.md): the gateway signs from it and the
    // services verify by kid against its JWKS, so a key can be rotated on the running system.
    ...(process.env.JWT_KEYS_DIR ? { JWT_JWKS_URL: `http://127.0.0.1:${process.env.PORT ?? '8080'}/v1/auth/.well-known/jwks.json` } : {}),
    // Paid bookings: consultation asks the wallet directly, with a credential of this run.
    INTERNAL_API_TOKEN: process.env.INTERNAL_API_TOKEN ?? randomBytes(32).toString('hex'),
    WALLET_URL: process.env.WALLET_URL ?? `http://127.0.0.1:${portOf('wallet')}`,
  };
  // A broker started here has a user per service (packages/infra's busUsers), each allowed to
  // publish only its own events; the consumers then check the AMQP user-id against the owner.
  const bus = (name) =>
    infra.busUsers ? { AMQP_URL: infra.busUsers.urlOf(name), BUS_PUBLISHER_USERS: infra.busUsers.publisherUsers } : {};
  const script = (name) => join(root, `services/${name}/dist/main.js`);
  const services = SERVICES.map(({ name, port }) => ({
    name,
    script: script(name),
    env: { ...base, ...bus(name), PORT: String(port), MONGO_DB: name, MONGO_URL: mongoUrlOf(name) },
  }));
  const gatewayEnv = {
    ...base,
    ...bus('gateway'),
    ...ADMIN,
    PORT: process.env.PORT ?? '8080',
    METRICS_HOST: process.env.METRICS_HOST ?? '127.0.0.1',
    MONGO_DB: 'gateway',
    MONGO_URL: mongoUrlOf('gateway'),
    JWT_PRIVATE_KEY: keys.privateKey,
    ...Object.fromEntries(SERVICES.map(({ name, port }) => [`${name.toUpperCase()}_URL`, `http://127.0.0.1:${port}`])),
  };
  return [...services, { name: 'gateway', script: script('gateway'), env: gatewayEnv }];
}

/**
 * Each service's migrations (`services/<name>/dist/migrate.js <args>`: up, down, status) against
 * the servers of `infra`, one service after another; the first that fails stops the rest.
 */
function migrateAll(infra, keys, args) {
  for (const { name, env } of serviceSet(infra, keys)) {
    const result = spawnSync(process.execPath, [join(root, `services/${name}/dist/migrate.js`), ...args], {
      cwd: root,
      stdio: 'inherit',
      env: { ...env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
    });
    if (result.status !== 0)
      throw new Error(`the migrations of ${name} failed (${result.error?.message ?? `exit ${result.status ?? result.signal}`})`);
  }
}

/** `npm run migrate [up|down|status]`: every service's database of `npm start` (or of MONGO_URL), then the servers stop. */
async function migrate(args) {
  prepare();
  const infra = await provide({ kind: 'file', path: join(root, '.dev/data/mongo.h2') });
  let code = 0;
  try {
    migrateAll(infra, devKeys(), args.length > 0 ? args : ['up']);
  } catch (err) {
    say(messageOf(err));
    code = 1;
  } finally {
    await infra.stop();
  }
  process.exit(code);
}

const ADMIN = {
  ADMIN_EMAIL: process.env.ADMIN_EMAIL ?? 'admin@marketplace.local',
  ADMIN_PASSWORD: process.env.ADMIN_PASSWORD ?? 'admin-change-me',
};

/**
 * Runs the services until Ctrl-C or until one dies, then stops everything and exits (non-zero
 * after a death: the service's code, or 128 + the signal that killed it). `.dev/run.json` names
 * every process of the run, so a start after a killed one stops what that one left behind.
 */
async function start() {
  prepare();
  const { runDevelopment, StartRefused, leanMallocEnv, SERVICE_MALLOC_ENV } = require(join(root, 'packages/infra/dist/index.js'));
  const { LEAN_RABBIT_ERL_ARGS } = require(join(root, 'packages/infra/dist/rabbit.js'));
  // A development stack that holds little memory (bench/README.md, "Memory of the stack after the
  // load"):
  // - glibc's malloc settings: packages/infra's LEAN_MALLOC_ENV (two arenas) for every process
  //   started from here, its SERVICE_MALLOC_ENV (the mmap and trim thresholds fixed at glibc's
  //   defaults) for the services (below), each where the environment does not name it (an empty
  //   MALLOC_ARENA_MAX: glibc's default). An empty threshold is dropped: glibc would read it as 0;
  // - RABBITMQ_ERL_MEMORY_ARGS: the RabbitMQ node's Erlang flags (packages/infra's
  //   LEAN_RABBIT_ERL_ARGS), unless set (an empty value: the VM's own allocators).
  for (const name of Object.keys(SERVICE_MALLOC_ENV)) if (process.env[name] === '') delete process.env[name];
  Object.assign(process.env, leanMallocEnv(process.env));
  process.env.RABBITMQ_ERL_MEMORY_ARGS ??= LEAN_RABBIT_ERL_ARGS;
  const keys = devKeys();
  const code = await runDevelopment({
    recordFile: join(root, '.dev/run.json'),
    say,
    cwd: root,
    // SERVICE_NODE_ARGS: the node flags of every service process (e.g. `--cpu-prof
    // --cpu-prof-dir=/tmp/prof` to profile them under a bench; node refuses those in NODE_OPTIONS).
    // By default a young generation of 2 MB semi-spaces: V8 grows it to 64 MB each on this kind of
    // machine, and a busy service then keeps most of it resident; at 2 MB a service peaks ≈ 20–35 MB
    // lower, for 20–65 % more CPU per operation under the write benches (1 MB: ≈ 20 % more again).
    // A development stack favours memory; to measure CPU, start with
    // SERVICE_NODE_ARGS=--max-semi-space-size=16 (bench/README.md). And an old generation of at
    // most 256 MB, five times the largest live heap the write benches leave (≈ 45 MB): V8 then grows
    // the heap by a smaller factor past each collection, where it let the busiest service's grow to
    // 90 MB with 30 MB live (bench/README.md, "Memory of the stack after the load").
    nodeArgs: (process.env.SERVICE_NODE_ARGS ?? '--max-semi-space-size=2 --max-old-space-size=256').split(' ').filter(Boolean),
    startInfra: async () => {
      const infra = await provide({ kind: 'file', path: join(root, '.dev/data/mongo.h2') });
      // The services start only on migrated databases: the migrations run first, as a release's job would.
      try {
        migrateAll(infra, keys, ['up']);
      } catch (err) {
        await infra.stop();
        throw err;
      }
      if (!process.env.MONGO_WIRE_COUNTER) return infra;
      const counters = await startWireCounters(infra.mongoUrl);
      return { ...infra, counters, stop: () => counters.stop().then(infra.stop) };
    },
    services: (infra) =>
      serviceSet(infra, keys, (name) => infra.counters?.urlOf(name) ?? infra.mongoUrl).map((service) => ({
        ...service,
        env: { ...service.env, ...leanMallocEnv(service.env, SERVICE_MALLOC_ENV) },
      })),
    onRunning: () => {
      say(
        `gateway on http://localhost:${process.env.PORT ?? '8080'}; admin ${ADMIN.ADMIN_EMAIL} (password from ADMIN_PASSWORD, default "admin-change-me")`,
      );
      say('Ctrl-C stops everything (a second Ctrl-C at once)');
    },
  }).catch((err) => {
    // A refusal or a server that would not start explains itself; a stack trace would not help.
    say(err instanceof StartRefused ? err.message : `could not start: ${err.message}`);
    return 1;
  });
  process.exit(code);
}

/**
 * MONGO_WIRE_COUNTER=1 (for `npm run bench:writes`): each service (and the gateway)
 * reaches the database through its own wire counter (packages/infra), and the counts are
 * served as JSON by name on a local port written to .dev/wire-counter.json. The relays run in
 * this process: its CPU is not the services' nor the database's.
 */
async function startWireCounters(mongoUrl) {
  const { createServer } = await import('node:http');
  const { startWireCounter } = require(join(root, 'packages/infra/dist/index.js'));
  const names = [...SERVICES.map(({ name }) => name), 'gateway'];
  const counters = new Map();
  for (const name of names) counters.set(name, await startWireCounter(mongoUrl));
  const server = createServer((req, res) => {
    const body = Object.fromEntries([...counters].map(([name, counter]) => [name, counter.counts()]));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const file = join(root, '.dev/wire-counter.json');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    JSON.stringify({ url: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/` }),
  );
  say(`database commands counted per service (MONGO_WIRE_COUNTER): ${file}`);
  return {
    urlOf: (name) => counters.get(name).url,
    stop: async () => {
      rmSync(file, { force: true });
      server.close();
      await Promise.all([...counters.values()].map((counter) => counter.stop()));
    },
  };
}

async function test() {
  const pm = prepare();
  say('type-checking the tests');
  sh(pm, ['exec', 'tsc', '-p', 'tsconfig.tests.json']);
  const infra = await provide({ kind: 'memory' });
  const args = ['exec', 'jest', '--ci', ...process.argv.slice(3)];
  const child = spawn(pm, args, {
    cwd: root,
    stdio: 'inherit',
    env: { ...toolEnv(), MONGO_URL: infra.mongoUrl, AMQP_URL: infra.amqpUrl },
  });
  const code = await new Promise((resolve) => child.once('exit', (status) => resolve(status ?? 1)));
  await infra.stop();
  process.exit(code);
}

/**
 * For docker compose: `node scripts/run.mjs env > .env`, KEY=value lines only (the development
 * key pair, one line each). Compose runs production, so no payment provider is chosen here:
 * the sandbox, whose Pay button creates money, only with `--sandbox-payments`, asked for by name.
 */
function printComposeEnv(args) {
  const unknown = args.filter((arg) => arg !== '--sandbox-payments');
  if (unknown.length > 0) {
    console.error(`[run] env: unknown argument ${unknown.join(' ')} (only --sandbox-payments)`);
    process.exit(2);
  }
  const keys = devKeys();
  const lines = [
    `JWT_PRIVATE_KEY=${JSON.stringify(keys.privateKey)}`,
    `JWT_PUBLIC_KEY=${JSON.stringify(keys.publicKey)}`,
    `INTERNAL_API_TOKEN=${randomBytes(32).toString('hex')}`,
    // compose runs the gateway in production, which refuses a published admin password: a random one (read it in .env).
    `ADMIN_PASSWORD=${randomBytes(18).toString('base64url')}`,
    // The servers' administrators, and a user per service on each (docker-compose.yml's db-users
    // and bus-users make them): hex, so they sit in the URLs as they are.
    `MONGO_ROOT_PASSWORD=${randomBytes(24).toString('hex')}`,
    `RABBITMQ_ADMIN_PASSWORD=${randomBytes(24).toString('hex')}`,
    ...['gateway', ...SERVICES.map(({ name }) => name)].flatMap((name) => [
      `MONGO_PASSWORD_${name.toUpperCase()}=${randomBytes(24).toString('hex')}`,
      `AMQP_PASSWORD_${name.toUpperCase()}=${randomBytes(24).toString('hex')}`,
    ]),
  ];
  if (args.includes('--sandbox-payments')) lines.push('PAYMENT_PROVIDER=sandbox', 'ALLOW_SANDBOX_PAYMENTS=true');
  else {
    say(
      'no payment provider written: compose stops until PAYMENT_PROVIDER is set. For top-ups on this machine, ' +
        'run `node scripts/run.mjs env --sandbox-payments > .env` (its Pay button creates money), or add ' +
        'PAYMENT_PROVIDER=chapa with CHAPA_SECRET_KEY and CHAPA_WEBHOOK_SECRET to .env',
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** A project script on the pinned Node.js, after the install and the build it may need. */
const script = (file, args) => {
  prepare();
  sh(process.execPath, [join(root, file), ...args]);
};
// The scripts a mode runs (package.json's `npm run` names start each through this file).
const SCRIPTS = {
  images: 'scripts/containers.mjs', // the images and compose (README "Containers")
  mixed: 'scripts/mixed-versions.mjs', // the previous releases beside the current ones (docs/mixed-versions.md)
  clients: 'scripts/generated-clients.mjs', // clients generated from the OpenAPI document, each driving a journey
  k8s: 'scripts/k8s-e2e.mjs', // the overlay on a real single-node Kubernetes (k8s/README.md)
};
const USAGE =
  'usage: node scripts/run.mjs start | migrate [up|down|status] | test [jest arguments] | build | typecheck | lint | format | env [--sandbox-payments] | ' +
  'images [steps] | mixed [options] | clients [check|generate|serve] | k8s [options] | node <script> [arguments] | exec <tool> [arguments]';

await onPinnedNode(say);
const rest = process.argv.slice(3);
if (mode === 'start') await start();
else if (mode === 'migrate') await migrate(rest);
else if (mode === 'test') await test();
else if (mode === 'build') prepare();
else if (mode === 'typecheck') {
  const pm = prepare();
  sh(pm, ['exec', 'tsc', '-p', 'tsconfig.tests.json']);
  sh(pm, ['exec', 'tsc', '-p', 'tsconfig.scripts.json']);
} else if (mode === 'lint') {
  const pm = prepare();
  sh(pm, ['exec', 'eslint', '.']);
  // The tooling (scripts/, bench/) type-checked from its JSDoc, as the services' TypeScript is by the build.
  sh(pm, ['exec', 'tsc', '-p', 'tsconfig.scripts.json']);
  sh(pm, ['exec', 'prettier', '--check', '.']);
} else if (mode === 'format') sh(prepare(), ['exec', 'prettier', '--write', '.']);
else if (mode === 'env') printComposeEnv(rest);
else if (SCRIPTS[mode]) script(SCRIPTS[mode], rest);
// Any other project script (`npm run dlq`, `bench`, `release`…): `node scripts/run.mjs node <file> …`.
else if (mode === 'node' && rest.length > 0) script(rest[0], rest.slice(1));
// A workspace tool (`npm run changeset`): `node scripts/run.mjs exec <tool> …`, after the install.
else if (mode === 'exec' && rest.length > 0) {
  const pm = pnpm();
  if (process.env.RUN_PREPARED !== root) sh(pm, ['install', '--frozen-lockfile', '--reporter=append-only']);
  sh(pm, ['exec', ...rest]);
} else {
  console.error(USAGE);
  process.exit(2);
}
