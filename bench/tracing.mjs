#!/usr/bin/env node
// Tracing overhead: the same system started twice on its own in-memory MongoDB and
// RabbitMQ (as the tests do) — tracing off (no OTEL_* variable: W3C propagation only), then on,
// sampled at 10 % (`parentbased_traceidratio`, 0.1) and exported over OTLP http/protobuf to a
// sink in this process that reads and drops — and, against each, the gateway read path
// (GET /v1/wallet, proxied to the wallet, as `bench/http.mjs`) and the booking path
// (`bench/writes.mjs`: paid bookings through consultation and the wallet, the outbox and the
// CRM), with the CPU per request of the six processes (`/proc/<pid>/stat`: unlike throughput it
// hardly moves with what else a shared machine runs). Prints one markdown table. Needs the build (`pnpm exec tsc -b`) and nothing running.
//   node bench/tracing.mjs   (BENCH_SECONDS, 5 by default; BENCH_ROUNDS of off-then-on, 1;
//   BENCH_TRACING=off,10,0 adds a run sampled at 0 %;
//   BENCH_CONNECTIONS as the scripts)
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { clearInterval, setInterval } from 'node:timers';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { SERVICES, systemEnv } from '../scripts/system-env.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { provideInfra } = require(join(root, 'packages/infra/dist/index.js'));
const seconds = process.env.BENCH_SECONDS ?? '5';
/** Off and on alternate this many times (a shared machine drifts: compare neighbours). */
const rounds = Number(process.env.BENCH_ROUNDS ?? 1);
const admin = { email: 'admin@bench.local', password: 'admin-bench-password' };

const freePort = () =>
  new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
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
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  return {
    url: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`,
    stats: () => ({ requests, bytes }),
    close: () => server.close(),
  };
}

async function startSystem(infra, label, extraEnv) {
  const keys = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const ports = Object.fromEntries(await Promise.all(SERVICES.map(async (name) => [name, await freePort()])));
  const url = (name) => `http://127.0.0.1:${ports[name]}`;
  const run = `bench_${label}_${Date.now().toString(36)}`;
  const system = systemEnv({
    url,
    mongoUrl: infra.mongoUrl,
    amqpUrl: infra.amqpUrl,
    namespace: run,
    database: (name) => `${run}_${name}`,
    keys,
    internalToken: randomBytes(24).toString('hex'),
    admin,
    // writes.mjs's top-ups come back to http://localhost:3000: the services' defaults allow it.
    checkout: false,
    unlimited: true,
    common: { NODE_ENV: 'development', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...extraEnv },
  });
  const envOf = (name) => ({ ...process.env, ...system[name] });
  // Every database migrated first, as a release's migrate job does before its pods start.
  for (const name of SERVICES) {
    const migrate = spawnSync(process.execPath, [join(root, 'services', name, 'dist', 'migrate.js'), 'up'], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: envOf(name),
    });
    if (migrate.status !== 0) throw new Error(`the migrations of ${name} failed (exit ${migrate.status})`);
  }
  const children = SERVICES.map((name) =>
    spawn(process.execPath, [join(root, 'services', name, 'dist', 'main.js')], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: envOf(name),
    }),
  );
  const deadline = Date.now() + 90_000;
  for (const name of SERVICES) {
    for (;;) {
      const ready = await fetch(`${url(name)}/readyz`)
        .then((res) => /** @type {Promise<any>} */ (res.json()))
        .catch(() => null);
      if (ready?.data?.checks?.broker === 'up') break;
      if (Date.now() > deadline) throw new Error(`${name} (${label}) not ready`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  const stop = () =>
    Promise.all(
      children.map(
        (child) =>
          new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : (child.once('exit', resolve), child.kill('SIGTERM')))),
      ),
    );
  return { gateway: url('gateway'), stop, pids: children.map((child) => child.pid) };
}

/** CPU seconds (user + system) the processes have used so far (`/proc/<pid>/stat`, 100 ticks/s). */
function cpuSeconds(pids) {
  let ticks = 0;
  for (const pid of pids) {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / 100;
}

/** Samples the system's CPU every 100 ms while `work` runs; `at(time)` is the CPU used by then. */
async function sampleCpu(pids, work) {
  const samples = [[Date.now(), cpuSeconds(pids)]];
  const timer = setInterval(() => samples.push([Date.now(), cpuSeconds(pids)]), 100);
  try {
    const result = await work();
    samples.push([Date.now(), cpuSeconds(pids)]);
    const at = (time) => (samples.findLast(([when]) => when <= time) ?? samples[0])[1];
    return { result, at };
  } finally {
    clearInterval(timer);
  }
}

const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);

/** GET /v1/wallet through the gateway (token checked, proxied, one read by the wallet), as http.mjs. */
async function walletReads(gateway) {
  const email = `bench-trace-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  const registered = await fetch(`${gateway}/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'a long password', fullName: 'Bench buyer', role: 'buyer' }),
  }).then((res) => /** @type {Promise<any>} */ (res.json()));
  const headers = { authorization: `Bearer ${registered.data.accessToken}` };
  for (let i = 0; (await fetch(`${gateway}/v1/wallet`, { headers })).status !== 200 && i < 100; i++)
    await new Promise((resolve) => setTimeout(resolve, 100));
  return autocannon({ url: `${gateway}/v1/wallet`, connections, duration: Number(seconds), headers });
}

/** Runs a bench script against `gateway`; resolves with its stdout and stderr. */
function runScript(script, gateway) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bench', script)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        ADMIN_EMAIL: admin.email,
        ADMIN_PASSWORD: admin.password,
        BENCH_URL: gateway,
        BENCH_SECONDS: seconds,
        BENCH_OVERHEAD: '0',
      },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.once('exit', (code) => (code === 0 ? resolve({ out, err }) : reject(new Error(`${script} exited ${code}:\n${out}\n${err}`))));
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
/** On, sampled at `percent` (0: every instrumentation at work, nothing recorded or exported). */
const on = (percent) => ({
  label: `on, ${percent} % sampled`,
  env: {
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: String(percent / 100),
  },
});
// BENCH_TRACING: the modes, `off` or a sampled percentage (default `off,10`).
const modes = (process.env.BENCH_TRACING ?? 'off,10')
  .split(',')
  .map((mode) => (mode === 'off' ? { label: 'off', env: {} } : on(Number(mode))));
const results = [];
try {
  for (const mode of Array.from({ length: rounds }, () => modes).flat()) {
    console.error(`[bench] tracing ${mode.label}: starting the system`);
    const system = await startSystem(infra, mode.label.split(',')[0], mode.env);
    try {
      const cpuBefore = cpuSeconds(system.pids);
      const read = await walletReads(system.gateway);
      const readCpu = cpuSeconds(system.pids) - cpuBefore;
      const writeRun = await sampleCpu(system.pids, () => runScript('writes.mjs', system.gateway));
      const writes = writeRun.result.out;
      // The bookings are writes.mjs's first load window (it prints the timestamps on stderr).
      const [start, end] = [...writeRun.result.err.matchAll(/# load window (?:starts|ends) (\S+)/g)].map((match) => Date.parse(match[1]));
      const bookings = Number(row(writes, 'bookings', 2)[0]);
      results.push({
        mode: mode.label,
        read: [read.requests.average.toFixed(0), read.latency.p50, read.latency.p99],
        readCpuMs: ((readCpu * 1000) / read.requests.total).toFixed(2),
        booking: row(writes, 'bookings', 3),
        bookingCpuMs: (((writeRun.at(end) - writeRun.at(start)) * 1000) / bookings).toFixed(1),
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
console.log(
  '| tracing | GET /v1/wallet req/s | p50 ms | p99 ms | CPU ms/request | bookings req/s | p50 ms | p99 ms | CPU ms/booking | booking → CRM lag p50 ms | p99 ms |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const { mode, read, readCpuMs, booking, bookingCpuMs, lag } of results)
  console.log(`| ${mode} | ${read.join(' | ')} | ${readCpuMs} | ${booking.join(' | ')} | ${bookingCpuMs} | ${lag.join(' | ')} |`);
