#!/usr/bin/env node
// Gateway overhead: the same public read straight from the catalog, through the
// gateway, and through nginx (Debian's, started here with one worker and keep-alive to the
// catalog) — interleaved rounds in one run, so the machine's noise falls on all three alike.
// Prints req/s and p99 of each, the ratios gateway/nginx and gateway/direct, and the p99 each
// adds at half of the direct peak. Run alone with `node bench/gateway-overhead.mjs`, or as part
// of `npm run bench`. Needs the system started (`npm start`), the gateway's rate limits off
// or high. BENCH_URL (gateway, :8080), BENCH_DIRECT_URL (catalog, :8082),
// BENCH_OVERHEAD_ROUNDS (5), BENCH_OVERHEAD_SECONDS (5), BENCH_CONNECTIONS (32 here).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const { freePort } = createRequire(import.meta.url)(join(dirname(fileURLToPath(import.meta.url)), '..', 'packages/infra/dist/index.js'));

const PATH = '/physical-products/categories';

function nginxBinary() {
  for (const candidate of ['nginx', '/usr/sbin/nginx']) {
    if (spawnSync(candidate, ['-v'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  return null;
}

/** nginx in front of `upstream` the way one would deploy it: one worker, keep-alive upstream, no access log. */
async function startNginx(binary, upstream) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-nginx-'));
  const port = await freePort();
  const { host } = new URL(upstream);
  writeFileSync(
    join(dir, 'nginx.conf'),
    `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream service { server ${host}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://service;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`,
  );
  const child = spawn(binary, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i += 1) {
    const ok = await fetch(`${url}${PATH}`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    stop: async () => {
      child.kill('SIGQUIT');
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function load(url, connections, seconds, overallRate) {
  const result = await autocannon({ url: `${url}${PATH}`, connections, duration: seconds, ...(overallRate ? { overallRate } : {}) });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p99: result.latency.p99, p50: result.latency.p50 };
}

export async function gatewayOverhead({
  gateway = process.env.BENCH_URL ?? 'http://localhost:8080',
  direct = process.env.BENCH_DIRECT_URL ?? 'http://localhost:8082',
  rounds = Number(process.env.BENCH_OVERHEAD_ROUNDS ?? 5),
  seconds = Number(process.env.BENCH_OVERHEAD_SECONDS ?? 5),
  connections = Number(process.env.BENCH_CONNECTIONS ?? 32),
} = {}) {
  const started = new Date().toISOString();
  const binary = nginxBinary();
  const nginx = binary ? await startNginx(binary, direct) : null;
  if (!nginx) console.log('\nnginx is not installed (Debian: apt-get install -y nginx): the nginx column is skipped.');
  const targets = { direct, gateway, ...(nginx ? { nginx: nginx.url } : {}) };
  try {
    for (const url of Object.values(targets)) await load(url, connections, 1); // warm-up: connections, JIT
    /** @typedef {{ rps: number, p99: number, p50: number }} Load */
    const peak = Object.fromEntries(Object.keys(targets).map((name) => [name, /** @type {Load[]} */ ([])]));
    for (let round = 0; round < rounds; round += 1) {
      for (const [name, url] of Object.entries(targets)) peak[name].push(await load(url, connections, seconds));
    }
    // Latency at half of the direct peak: the same offered load on each, so the p99s compare.
    const halfRate = Math.max(1, Math.round(median(peak.direct.map((r) => r.rps)) / 2));
    const half = Object.fromEntries(Object.keys(targets).map((name) => [name, /** @type {Load[]} */ ([])]));
    for (let round = 0; round < rounds; round += 1) {
      for (const [name, url] of Object.entries(targets)) half[name].push(await load(url, connections, seconds, halfRate));
    }
    report(peak, half, { rounds, seconds, connections, halfRate, started });
  } finally {
    await nginx?.stop();
  }
}

function report(peak, half, { rounds, seconds, connections, halfRate, started }) {
  const ratio = (a, b) => median(peak[a].map((r, i) => r.rps / peak[b][i].rps));
  console.log(
    `\nGateway overhead on GET ${PATH}: ${rounds} interleaved rounds of ${seconds} s, ${connections} connections ` +
      `(started ${started}); medians over the rounds:\n`,
  );
  console.log('| path | req/s | p99 ms at peak | p50 ms at half peak | p99 ms at half peak |');
  console.log('|---|---:|---:|---:|---:|');
  for (const name of Object.keys(peak)) {
    const rps = median(peak[name].map((r) => r.rps)).toFixed(0);
    console.log(
      `| ${name} | ${rps} | ${median(peak[name].map((r) => r.p99))} | ${median(half[name].map((r) => r.p50))} | ${median(half[name].map((r) => r.p99))} |`,
    );
  }
  console.log(`\nhalf peak = ${halfRate} req/s offered to each`);
  console.log(`gateway/direct throughput: ${ratio('gateway', 'direct').toFixed(2)} (target ≥ 0.85)`);
  if (peak.nginx) console.log(`gateway/nginx throughput:  ${ratio('gateway', 'nginx').toFixed(2)} (target ≥ 0.9)`);
  const added = median(half.gateway.map((r, i) => r.p99 - half.direct[i].p99));
  console.log(`p99 added by the gateway at half peak: ${added} ms (target ≤ 2 ms)`);
  if (peak.nginx) console.log(`p99 added by nginx at half peak:       ${median(half.nginx.map((r, i) => r.p99 - half.direct[i].p99))} ms`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await gatewayOverhead();
