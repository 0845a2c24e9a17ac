#!/usr/bin/env node
// CPU per proxied request: the public read `GET /physical-products/categories` through
//   - a bare Node proxy (node:http in, node:http out on a keep-alive agent, bodies piped, nothing
//     else: the floor any Node proxy pays),
//   - the gateway's build (services/gateway/dist), default limits on (per address 1200/min, per
//     user 600/min, slots 60/min, counted in the gateway's database; access log as configured),
//   - the same build with tracing on, sampled at 10 % (OTLP to a sink in this process),
//   - and, when BENCH_GATEWAY_BASELINE names another build's main.js (the code before a change),
//     that build too,
// all in front of one catalog, in interleaved rounds (bare, gateway, tracing, baseline, bare, ...)
// so the machine's noise falls on each alike. The figure is the proxy process's own CPU
// (`/proc/<pid>/stat`, user + system) over the round divided by the requests: the load
// generator and the catalog are not counted, which is what a shared machine hardly moves.
// Each client address (X-Forwarded-For, TRUST_PROXY=1 as behind a load balancer) sends under
// its per-minute limit, so every answer is a 200 and the limits do their work on every request.
//   node bench/gateway-cpu.mjs   (after the build; BENCH_ROUNDS 5, BENCH_REQUESTS 4000 per
//   round, BENCH_CONNECTIONS 32, BENCH_ADDRESSES 2000, BENCH_GATEWAY_BASELINE, BENCH_TRACING=0
//   leaves the tracing column out, BENCH_NONE_SAMPLED=1 adds each build with tracing on and
//   nothing sampled (OTEL_TRACES_SAMPLER=always_off: what every request pays, sampled or not),
//   BENCH_GATEWAY_NODE_ARGS the gateways' node options, BENCH_BARE_NODE_ARGS the bare proxy's,
//   BENCH_PER_ROUND=1 prints each column's CPU µs per request round by round, to pair rounds,
//   BENCH_UNDICI_BARE=1 adds a second bare proxy, the same but forwarding with undici as the
//   gateway does: one `Pool` with the gateway's options, `pool.dispatch` with a handler, the answer
//   written by `writeHead`/`write` (pause and resume on backpressure)/`end` — the two bare columns
//   differ only in the client, so their ratio is what undici costs against node:http's client)
// The baseline runs as this build does: untraced and, unless BENCH_TRACING=0, traced at 10 %.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cpuMsOf, infraKit, root, sleep, startService } from './lib/service-bench.mjs';

const { provideInfra, testIdentity, freePort, uniqueName } = infraKit;
const PATH = '/physical-products/categories';
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const amount = Number(process.env.BENCH_REQUESTS ?? 4000);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const addresses = Number(process.env.BENCH_ADDRESSES ?? 2000);
const baseline = process.env.BENCH_GATEWAY_BASELINE;
const withTracing = process.env.BENCH_TRACING !== '0';
const noneSampled = withTracing && process.env.BENCH_NONE_SAMPLED === '1';
// Node options of the gateways this bench starts (`--cpu-prof --cpu-prof-dir=…` for a profile),
// and of the bare proxy (BENCH_BARE_NODE_ARGS: the same profile of the floor, to compare them).
const gatewayNodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean);
const bareNodeArgs = (process.env.BENCH_BARE_NODE_ARGS ?? '').split(' ').filter(Boolean);
const undiciBare = process.env.BENCH_UNDICI_BARE === '1';

/** The bare proxy, in a process of its own (so its CPU is read apart). */
const BARE = `
const http = require('node:http');
const target = new URL(process.env.TARGET);
const agent = new http.Agent({ keepAlive: true, maxSockets: 512, scheduling: 'lifo' });
http.createServer((req, res) => {
  const out = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent }, (up) => {
    res.writeHead(up.statusCode, up.headers);
    up.pipe(res);
  });
  out.on('error', () => { res.statusCode = 502; res.end(); });
  req.pipe(out);
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
process.once('SIGTERM', () => process.exit(0)); // an exit, so a --cpu-prof profile is written
`;

/**
 * The bare proxy forwarding with undici instead, the gateway's way (services/gateway/src/proxy/
 * forward.ts: the pool's options, the dispatch options with the default UPSTREAM_TIMEOUT_MS, the
 * handler's writes), all else as above: the two differ only in the client.
 */
const UNDICI_BARE = `
const http = require('node:http');
const { Pool } = require(process.env.UNDICI);
const target = new URL(process.env.TARGET);
const pool = new Pool(target.origin, { connections: 512, keepAliveMaxTimeout: 30_000 });
http.createServer((req, res) => {
  const body = req.headers['content-length'] || req.headers['transfer-encoding'] ? req : null;
  pool.dispatch({ path: req.url, method: req.method, headers: req.headers, body, headersTimeout: 15_000, bodyTimeout: 15_000 }, {
    onRequestStart() {},
    onResponseStart(ctl, statusCode, headers) { res.writeHead(statusCode, headers); },
    onResponseData(ctl, chunk) {
      if (!res.write(chunk)) { ctl.pause(); res.once('drain', () => ctl.resume()); }
    },
    onResponseEnd() { res.end(); },
    onResponseError() { if (!res.headersSent) res.statusCode = 502; res.end(); },
  });
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
process.once('SIGTERM', () => process.exit(0));
`;

async function startBare(catalog, code = BARE) {
  const port = await freePort();
  // UNDICI_BARE takes the gateway's own undici (its dependency).
  const undici = code === UNDICI_BARE ? { UNDICI: createRequire(join(root, 'services/gateway/package.json')).resolve('undici') } : {};
  const child = spawn(process.execPath, [...bareNodeArgs, '-e', code], {
    env: { ...process.env, TARGET: catalog, PORT: String(port), ...undici },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  await new Promise((resolve) => child.once('message', resolve));
  return { url: `http://127.0.0.1:${port}`, child };
}

/** An OTLP/HTTP endpoint that reads every export and drops it. */
async function startSink() {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  return { url: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`, close: () => server.close() };
}

async function startGateway(infra, identity, main, catalog, env = {}) {
  return startService(infra, identity, {
    main,
    database: 'bench_gateway',
    nodeArgs: gatewayNodeArgs,
    env: {
      JWT_PRIVATE_KEY: identity.keys.privateKey,
      CATALOG_URL: catalog,
      TRUST_PROXY: '1',
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
  });
}

let next = 0;
/** `amount` requests on `connections` connections, each from the next client address. */
async function load(url, { strict = true } = {}) {
  const result = await autocannon({
    url: `${url}${PATH}`,
    connections,
    amount,
    requests: [
      {
        setupRequest: (request) => {
          next = (next + 1) % addresses;
          return { ...request, headers: { ...request.headers, 'x-forwarded-for': `10.${(next >> 8) & 255}.${next & 255}.7` } };
        },
      },
    ],
  });
  if (strict && (result.non2xx > 0 || result.errors > 0)) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result;
}

async function measure(target) {
  const before = cpuMsOf(target.child.pid);
  const result = await load(target.url);
  await sleep(300); // the answers' last log lines and limit writes
  const cpu = cpuMsOf(target.child.pid) - before;
  return { us: (cpu * 1000) / result.requests.total, rps: result.requests.average, p99: result.latency.p99 };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const infra = await provideInfra({ say: (line) => console.error(`[bench] ${line}`), mongoStorage: { kind: 'memory' } });
const identity = testIdentity();
const sink = withTracing ? await startSink() : null;
const started = [];
try {
  const catalog = await startService(infra, identity, { main: join(root, 'services/catalog/dist/main.js'), database: 'bench_catalog' });
  started.push(catalog);
  // Each proxy is stopped at the end once started, also when a later one fails to start.
  const track = (target) => (started.push(target), target);
  const targets = { 'bare Node proxy': track(await startBare(catalog.url)) };
  if (undiciBare) targets['bare proxy, undici client'] = track(await startBare(catalog.url, UNDICI_BARE));
  targets.gateway = track(await startGateway(infra, identity, join(root, 'services/gateway/dist/main.js'), catalog.url));
  const tracing = (env = {}) => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: sink?.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.1',
    ...env,
  });
  if (sink)
    targets['gateway, tracing 10 %'] = track(
      await startGateway(
        infra,
        identity,
        join(root, 'services/gateway/dist/main.js'),
        catalog.url,
        tracing({ BUS_NAMESPACE: uniqueName('bench') }),
      ),
    );
  const none = () => tracing({ OTEL_TRACES_SAMPLER: 'always_off' });
  if (noneSampled)
    targets['gateway, tracing, none sampled'] = track(
      await startGateway(infra, identity, join(root, 'services/gateway/dist/main.js'), catalog.url, none()),
    );
  if (baseline) {
    targets['baseline gateway'] = track(await startGateway(infra, identity, baseline, catalog.url));
    if (sink) targets['baseline gateway, tracing 10 %'] = track(await startGateway(infra, identity, baseline, catalog.url, tracing()));
    if (noneSampled)
      targets['baseline gateway, tracing, none sampled'] = track(await startGateway(infra, identity, baseline, catalog.url, none()));
  }
  for (const target of Object.values(targets)) await load(target.url, { strict: false }); // warm-up: connections, JIT, leases
  const results = Object.fromEntries(
    Object.keys(targets).map((name) => [name, /** @type {{ us: number, rps: number, p99: number }[]} */ ([])]),
  );
  for (let round = 0; round < rounds; round += 1) {
    for (const [name, target] of Object.entries(targets)) results[name].push(await measure(target));
  }
  const bare = results['bare Node proxy'];
  console.log(
    `\nCPU per proxied GET ${PATH}: ${rounds} interleaved rounds of ${amount} requests, ${connections} connections, ` +
      `${addresses} client addresses (${new Date().toISOString()}); medians, per-round ratio to the bare proxy:\n`,
  );
  console.log('| proxy | CPU µs / request | × bare proxy | req/s | p99 ms |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [name, rows] of Object.entries(results)) {
    const ratio = median(rows.map((row, i) => row.us / bare[i].us));
    console.log(
      `| ${name} | ${median(rows.map((r) => r.us)).toFixed(0)} (${Math.min(...rows.map((r) => r.us)).toFixed(0)}–${Math.max(...rows.map((r) => r.us)).toFixed(0)}) | ${ratio.toFixed(2)} | ${median(rows.map((r) => r.rps)).toFixed(0)} | ${median(rows.map((r) => r.p99))} |`,
    );
  }
  if (process.env.BENCH_PER_ROUND === '1') {
    console.log('\nCPU µs / request, round by round:\n');
    for (const [name, rows] of Object.entries(results)) console.log(`${name}: ${rows.map((row) => row.us.toFixed(0)).join(' ')}`);
  }
} finally {
  for (const service of started.reverse()) {
    const exited = new Promise((resolve) => (service.child.exitCode !== null ? resolve(undefined) : service.child.once('exit', resolve)));
    service.child.kill('SIGTERM');
    await exited;
  }
  sink?.close();
  await infra.stop();
}
