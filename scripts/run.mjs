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

const say = (line) => console.log(`[run] ${line}`);

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

function startChild(name, script, env) {
  // stdout goes straight to ours: every log line is JSON naming its `service`, and copying each
  // line through this process cost CPU on every request (issue 15). stderr (a crash) is prefixed.
  // SERVICE_NODE_ARGS: extra node flags for every service process (e.g. `--cpu-prof
  // --cpu-prof-dir=/tmp/prof` to profile them under a bench; node refuses those in NODE_OPTIONS).
  const nodeArgs = (process.env.SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, script], { cwd: root, env, stdio: ['ignore', 'inherit', 'pipe'] });
  const prefix = `[${name}] `.padEnd(15);
  let rest = '';
  child.stderr.on('data', (chunk) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop();
    for (const line of lines) if (line) process.stderr.write(prefix + line + '\n');
  });
  return child;
}

async function start() {
  prepare();
  const infra = await provide({ kind: 'file', path: join(root, '.dev/data/mongo.h2') });
  const keys = devKeys();
  const base = {
    ...process.env,
    NODE_ENV: process.env.NODE_ENV ?? 'development',
    MONGO_URL: infra.mongoUrl,
    AMQP_URL: infra.amqpUrl,
    JWT_PUBLIC_KEY: keys.publicKey,
    // Paid bookings: consultation asks the wallet directly, with a credential of this run.
    INTERNAL_API_TOKEN: process.env.INTERNAL_API_TOKEN ?? randomBytes(32).toString('hex'),
    WALLET_URL: process.env.WALLET_URL ?? `http://127.0.0.1:${SERVICES.find(({ name }) => name === 'wallet').port}`,
  };
  const children = SERVICES.map(({ name, port }) =>
    startChild(name, `services/${name}/dist/main.js`, { ...base, PORT: String(port), MONGO_DB: name }),
  );
  const admin = {
    ADMIN_EMAIL: process.env.ADMIN_EMAIL ?? 'admin@marketplace.local',
    ADMIN_PASSWORD: process.env.ADMIN_PASSWORD ?? 'admin-change-me',
  };
  const gatewayEnv = {
    ...base,
    ...admin,
    PORT: process.env.PORT ?? '8080',
    MONGO_DB: 'gateway',
    JWT_PRIVATE_KEY: keys.privateKey,
    ...Object.fromEntries(SERVICES.map(({ name, port }) => [`${name.toUpperCase()}_URL`, `http://127.0.0.1:${port}`])),
  };
  children.push(startChild('gateway', 'services/gateway/dist/main.js', gatewayEnv));
  say(
    `gateway on http://localhost:${gatewayEnv.PORT}; admin ${admin.ADMIN_EMAIL} (password from ADMIN_PASSWORD, default "admin-change-me")`,
  );
  say('Ctrl-C stops everything');
  let stopping = false;
  const stop = async (code) => {
    if (stopping) return;
    stopping = true;
    say('stopping');
    await Promise.all(
      children.map(
        (child) =>
          new Promise((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', resolve);
            child.kill('SIGTERM');
          }),
      ),
    );
    await infra.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  for (const child of children) {
    child.once('exit', (code) => {
      if (!stopping) {
        say(`a service exited (code ${code}); stopping the rest`);
        void stop(1);
      }
    });
  }
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

if (mode === 'start') await start();
else if (mode === 'test') await test();
else if (mode === 'lint') sh(pnpm(), ['run', 'lint']);
else if (mode === 'env') {
  // For docker compose: `node scripts/run.mjs env > .env` (the development key pair, one line each).
  const keys = devKeys();
  console.log(`JWT_PRIVATE_KEY=${JSON.stringify(keys.privateKey)}`);
  console.log(`JWT_PUBLIC_KEY=${JSON.stringify(keys.publicKey)}`);
  // A laptop's choice, written out so compose never runs the sandbox silently (its Pay button creates money).
  console.log('PAYMENT_PROVIDER=sandbox');
  console.log('ALLOW_SANDBOX_PAYMENTS=true');
  console.log(`INTERNAL_API_TOKEN=${randomBytes(32).toString('hex')}`);
  // compose runs the gateway in production, which refuses a published admin password: a random one (read it in .env).
  console.log(`ADMIN_PASSWORD=${randomBytes(18).toString('base64url')}`);
} else {
  console.error('usage: node scripts/run.mjs start|test|lint|env [jest arguments]');
  process.exit(2);
}
