#!/usr/bin/env node
// Tracing overhead (issue 22): the same system started twice on its own in-memory MongoDB and
// RabbitMQ (as the tests do) — tracing off (no OTEL_* variable: W3C propagation only), then on,
// sampled at 10 % (`parentbased_traceidratio`, 0.1) and exported over OTLP http/protobuf to a
// sink in this process that reads and drops — and, against each, the gateway read path
// (`bench/http.mjs`: GET /v1/wallet, proxied to the wallet) and the booking path
// (`bench/writes.mjs`: paid bookings through consultation and the wallet, the outbox and the
// CRM). Prints one markdown table. Needs the build (`pnpm exec tsc -b`) and nothing running.
//   node bench/tracing.mjs   (BENCH_SECONDS, 5 by default; BENCH_ROUNDS of off-then-on, 1;
//   BENCH_CONNECTIONS as the scripts)
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { provideInfra } = require(join(root, 'packages/infra/dist/index.js'));
const seconds = process.env.BENCH_SECONDS ?? '5';
/** Off and on alternate this many times (a shared machine drifts: compare neighbours). */
const rounds = Number(process.env.BENCH_ROUNDS ?? 1);
const SERVICES = ['wallet', 'catalog', 'crm', 'consultation', 'review'];
const admin = { ADMIN_EMAIL: 'admin@bench.local', ADMIN_PASSWORD: 'admin-bench-password' };

const freePort = () =>
  new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/** An OTLP/HTTP endpoint that reads every export and drops it; counts what it got. */
async function startSink() {
  let requests = 0;
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on('data', (chunk) => (bytes += chunk.length));
    req.on('end', () => {
      requests += 1;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, stats: () => ({ requests, bytes }), close: () => server.close() };
}

async function startSystem(infra, label, extraEnv) {
  const keys = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const ports = Object.fromEntries(await Promise.all([...SERVICES, 'gateway'].map(async (name) => [name, await freePort()])));
  const url = (name) => `http://127.0.0.1:${ports[name]}`;
  const run = `bench_${label}_${Date.now().toString(36)}`;
  const base = {
    ...process.env,
    NODE_ENV: 'development',
    HOST: '127.0.0.1',
    MONGO_URL: infra.mongoUrl,
    AMQP_URL: infra.amqpUrl,
    BUS_NAMESPACE: run,
    JWT_PUBLIC_KEY: keys.publicKey,
    LOG_LEVEL: 'warn',
    INTERNAL_API_TOKEN: randomBytes(24).toString('hex'),
    WALLET_URL: url('wallet'),
    ...extraEnv,
  };
  const children = [...SERVICES, 'gateway'].map((name) =>
    spawn(process.execPath, [join(root, 'services', name, 'dist', 'main.js')], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...base,
        PORT: String(ports[name]),
        MONGO_DB: `${run}_${name}`,
        ...(name === 'gateway'
          ? {
              ...admin,
              JWT_PRIVATE_KEY: keys.privateKey,
              RATE_LIMIT_IP_PER_MIN: '0',
              RATE_LIMIT_USER_PER_MIN: '0',
              RATE_LIMIT_REGISTER_IP_PER_HOUR: '0',
              RATE_LIMIT_SLOTS_PER_MIN: '0',
              ...Object.fromEntries(SERVICES.map((service) => [`${service.toUpperCase()}_URL`, url(service)])),
            }
          : {}),
      },
    }),
  );
  const deadline = Date.now() + 90_000;
  for (const name of [...SERVICES, 'gateway']) {
    for (;;) {
      const ready = await fetch(`${url(name)}/readyz`)
        .then((res) => res.json())
        .catch(() => null);
      if (ready?.data?.checks?.broker === 'up') break;
      if (Date.now() > deadline) throw new Error(`${name} (${label}) not ready`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  const stop = () =>
    Promise.all(
      children.map(
        (child) => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.kill('SIGTERM')))),
      ),
    );
  return { gateway: url('gateway'), stop };
}

/** Runs a bench script against `gateway`; resolves with its stdout. */
function runScript(script, gateway) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bench', script)], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...admin, BENCH_URL: gateway, BENCH_SECONDS: seconds, BENCH_OVERHEAD: '0' },
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${script} exited ${code}:\n${out}`))));
  });
}

/** Three cells (from the `from`th) of the markdown row whose first cell starts with `name`. */
function row(table, name, from) {
  const line = table.split('\n').find((each) => each.startsWith(`| ${name}`));
  return line
    ? line
        .split('|')
        .slice(from, from + 3)
        .map((cell) => cell.trim())
    : ['–', '–', '–'];
}

const infra = await provideInfra({ say: (line) => console.error(`[bench] ${line}`), mongoStorage: { kind: 'memory' } });
const sink = await startSink();
const modes = [
  { label: 'off', env: {} },
  {
    label: 'on, 10 % sampled',
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
    },
  },
];
const results = [];
try {
  for (const mode of Array.from({ length: rounds }, () => modes).flat()) {
    console.error(`[bench] tracing ${mode.label}: starting the system`);
    const system = await startSystem(infra, mode.label.split(',')[0], mode.env);
    try {
      const reads = await runScript('http.mjs', system.gateway);
      const writes = await runScript('writes.mjs', system.gateway);
      results.push({
        mode: mode.label,
        read: row(reads, 'GET /v1/wallet', 2),
        booking: row(writes, 'bookings', 3),
        lag: row(writes, 'booking → CRM lag', 4).slice(0, 2),
      });
    } finally {
      await system.stop();
    }
  }
} finally {
  sink.close();
  await infra.stop();
}
const { requests, bytes } = sink.stats();
console.log(
  `\nTracing overhead, ${seconds} s per case (${new Date().toISOString()}); the sink got ${requests} exports, ${(bytes / 1024).toFixed(0)} KiB:\n`,
);
console.log('| tracing | GET /v1/wallet req/s | p50 ms | p99 ms | bookings req/s | p50 ms | p99 ms | booking → CRM lag p50 ms | p99 ms |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const { mode, read, booking, lag } of results)
  console.log(`| ${mode} | ${read.join(' | ')} | ${booking.join(' | ')} | ${lag.join(' | ')} |`);
