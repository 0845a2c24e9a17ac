#!/usr/bin/env node
// CPU per request of the traced edge's own tracing work, in one process, without HTTP: kit's
// `traceRequests` wrapping a listener that does what the gateway's proxy does for the trace
// (`startProxySpan`: the proxied call's client span or its `traceparent`), tracing on as the
// gateway bench runs it (`parentbased_traceidratio` at 0.1; the console exporter, its output
// dropped, so the sampled tenth is exported too but not serialized as OTLP). The gateway bench
// (gateway-cpu.mjs) measures the whole proxy, whose rounds swing by more than this work on a
// shared machine; this one measures the work alone, for two builds of kit interleaved.
//   node bench/edge-tracing-cpu.mjs   (after the build; BENCH_KIT_BASELINE=<another build's
//   packages/kit/dist> adds it; BENCH_ROUNDS 5 per run, BENCH_RUNS 2, BENCH_REQUESTS 100000)
import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { setImmediate } from 'node:timers/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const runs = Number(process.env.BENCH_RUNS ?? 2);
const amount = Number(process.env.BENCH_REQUESTS ?? 100_000);

/** In a child: the median CPU µs per request of `rounds` rounds with the kit build at `dist`. */
async function measure(dist) {
  Object.assign(process.env, {
    OTEL_TRACES_EXPORTER: 'console',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.1',
    OTEL_BSP_SCHEDULE_DELAY: '200',
  });
  console.dir = () => undefined;
  const kit = createRequire(join(dist, 'tracing.js'))(join(dist, 'tracing.js'));
  kit.initTracing('edge-tracing-bench', process.env, { undiciSpans: false, httpServerSpans: false });
  kit.propagateTraceTo('http://127.0.0.1:9');
  const target = new URL('http://127.0.0.1:9/');
  const path = '/physical-products/categories';
  const listener = kit.traceRequests(() => kit.startProxySpan('GET', target, path, {})?.(200));
  const req = {
    url: path,
    method: 'GET',
    headers: { host: '127.0.0.1:8080' },
    httpVersion: '1.1',
    socket: { remoteAddress: '127.0.0.1', remotePort: 5000 },
  };
  const round = async (n) => {
    const before = process.cpuUsage();
    for (let i = 0; i < n; i += 1) {
      const res = Object.assign(new EventEmitter(), { statusCode: 200, writableFinished: true });
      listener(req, res);
      res.emit('close');
      // A turn now and then, as a server has: the batch processor exports the sampled spans.
      if (i % 1000 === 999) await setImmediate();
    }
    const cpu = process.cpuUsage(before);
    return (cpu.user + cpu.system) / n;
  };
  await round(amount / 2); // warm-up
  const results = [];
  for (let i = 0; i < rounds; i += 1) results.push(await round(amount));
  return [...results].sort((a, b) => a - b)[Math.floor(results.length / 2)];
}

if (process.argv[2] === '--child') {
  process.stdout.write(String(await measure(process.argv[3])));
  process.exit(0);
}

const builds = { 'this build': join(root, 'packages/kit/dist') };
if (process.env.BENCH_KIT_BASELINE) builds.baseline = process.env.BENCH_KIT_BASELINE;
const results = Object.fromEntries(Object.keys(builds).map((name) => [name, /** @type {number[]} */ ([])]));
for (let run = 0; run < runs; run += 1) {
  for (const [name, dist] of Object.entries(builds)) {
    const child = spawnSync(process.execPath, [process.argv[1], '--child', dist], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`${name}: ${child.stderr}`);
    results[name].push(Number(child.stdout));
  }
}
console.log(`\nCPU µs per request of the edge's tracing work (${runs} runs × ${rounds} rounds of ${amount}, sampled at 0.1):\n`);
console.log('| kit | µs / request, median of each run |');
console.log('|---|---:|');
for (const [name, values] of Object.entries(results)) console.log(`| ${name} | ${values.map((us) => us.toFixed(2)).join(', ')} |`);
