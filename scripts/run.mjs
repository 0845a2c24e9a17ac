#!/usr/bin/env node
// `npm start` and `npm test` on a fresh machine with only Node.js: get pnpm, install, build,
// provide MongoDB and RabbitMQ (packages/infra, DESIGN §8), then start everything or test it.
// Uses nothing but Node's own modules until the install is done.
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const mode = process.argv[2];
const PNPM_VERSION = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.split('@')[1];
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

/** pnpm at the version package.json names: on PATH if it is that one, else installed in .tools/. */
function pnpm() {
  const onPath = spawnSync('pnpm', ['--version'], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim() === PNPM_VERSION) return 'pnpm';
  const local = join(root, '.tools/node_modules/.bin/pnpm');
  if (!existsSync(local)) {
    say(`installing pnpm ${PNPM_VERSION} into .tools/`);
    sh('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefix', join(root, '.tools'), `pnpm@${PNPM_VERSION}`]);
  }
  return local;
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
function serviceSet(infra, keys) {
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
  const script = (name) => join(root, `services/${name}/dist/main.js`);
  const services = SERVICES.map(({ name, port }) => ({
    name,
    script: script(name),
    env: { ...base, PORT: String(port), MONGO_DB: name },
  }));
  const gatewayEnv = {
    ...base,
    ...ADMIN,
    PORT: process.env.PORT ?? '8080',
    METRICS_HOST: process.env.METRICS_HOST ?? '127.0.0.1',
    MONGO_DB: 'gateway',
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
    startInfra: () => provide({ kind: 'file', path: join(root, '.dev/data/mongo.h2') }),
    services: (infra) => serviceSet(infra, keys),
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

if (mode === 'start') await start();
else if (mode === 'test') await test();
else if (mode === 'lint') sh(pnpm(), ['run', 'lint']);
else if (mode === 'env') printComposeEnv(process.argv.slice(3));
else {
  console.error('usage: node scripts/run.mjs start|test|lint|env [--sandbox-payments]|[jest arguments]');
  process.exit(2);
}
