#!/usr/bin/env node
// Where a process's CPU went, from a V8 profile (`node --cpu-prof`, e.g. the gateways of
// gateway-cpu.mjs with BENCH_GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=…"): each busy sample is
// charged to the innermost frame of a package on its stack — a dependency (`undici`,
// `@opentelemetry/sdk-trace`) or a file of the workspace (`kit/tracing.js`) — so that Node's own
// frames (streams, sockets, `AsyncLocalStorage.run`) count for the code that called them; a sample
// with no package on its stack is Node's (`node:internal/streams/writable`), GC or `(program)`.
// Given two profiles (before, after; or untraced, traced) it prints both and the difference.
//   node bench/cpuprofile-summary.mjs <a.cpuprofile> [<b.cpuprofile>] [--requests N] [--from <url part>] [--top N]
// --from: samples from the first whose stack has a frame whose URL contains it (the first proxied
// request: `--from proxy/forward.js`), so that start-up is left out. --requests: the requests served
// in that window, to print µs per request (a sample is the profile's median sampling interval);
// without it, shares of the busy samples. V8 samples wall time while the thread is not idle: a
// thread descheduled in a system call is charged to that call, so read the attribution of the
// JavaScript, and take CPU totals from the process (`/proc/<pid>/stat`, as the benches do) or perf.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
/** @param {string} name */
const option = (name) => {
  const at = args.indexOf(name);
  return at === -1 ? undefined : args.splice(at, 2)[1];
};
const from = option('--from');
const requests = Number(option('--requests') ?? 0);
const top = Number(option('--top') ?? 25);
const files = args;
if (files.length < 1 || files.length > 2) {
  console.error('usage: node bench/cpuprofile-summary.mjs <a.cpuprofile> [<b.cpuprofile>] [--requests N] [--from <url part>] [--top N]');
  process.exit(2);
}

/** The package a script belongs to: a dependency's name, or the workspace file below its `dist/`; null for Node's own. */
function packageOf(url) {
  const dependency = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency) return dependency[1];
  const workspace = /\/(?:packages|services)\/([^/]+)\/dist\/(.+)$/.exec(url);
  return workspace ? `${workspace[1]}/${workspace[2]}` : null;
}

/** A script's path from its package on (`undici/lib/core/util.js`, `kit/tracing.js`), for naming a function. */
function fileOf(url) {
  const dependency = /node_modules\/\.pnpm\/[^/]+\/node_modules\/(.+)$/.exec(url);
  return dependency ? dependency[1].replace('/dist/', '/') : (packageOf(url) ?? url);
}

/** Busy samples by package and by function, and the µs one sample stands for. */
function summarize(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const byPackage = new Map();
  const byFunction = new Map();
  const add = (map, key) => map.set(key, (map.get(key) ?? 0) + 1);
  let started = !from;
  let busy = 0;
  for (const sample of profile.samples) {
    const stack = [];
    for (let id = sample; id !== undefined; id = parents.get(id)) stack.push(nodes.get(id).callFrame);
    if (!started) started = stack.some((frame) => frame.url.includes(from));
    if (!started || stack[0].functionName === '(idle)') continue;
    busy += 1;
    const owner = stack.find((frame) => packageOf(frame.url));
    if (owner) {
      const where = packageOf(owner.url);
      add(byPackage, where);
      add(byFunction, `${owner.functionName || '(anonymous)'} ${fileOf(owner.url)}:${owner.lineNumber + 1}`);
    } else {
      const node = stack.find((frame) => frame.url)?.url ?? stack[0].functionName;
      add(byPackage, node);
      add(byFunction, node);
    }
  }
  const deltas = [...profile.timeDeltas].sort((a, b) => a - b);
  return { byPackage, byFunction, busy, sampleUs: deltas[Math.floor(deltas.length / 2)] ?? 1000 };
}

const summaries = files.map(summarize);
/** A count as µs per request, or as a share of that profile's busy samples. */
const shown = (count, summary) =>
  requests > 0 ? ((count * summary.sampleUs) / requests).toFixed(1) : `${((100 * count) / Math.max(1, summary.busy)).toFixed(1)} %`;
const unit = requests > 0 ? 'µs / request' : 'share';
console.log(summaries.map((s, i) => `${files[i]}: ${s.busy} busy samples of ${s.sampleUs} µs`).join('\n'));
for (const [title, key, limit] of /** @type {const} */ ([
  ['package or workspace file', 'byPackage', top],
  ['function', 'byFunction', top],
])) {
  const [a, b] = summaries;
  const count = (summary, name) => summary?.[key].get(name) ?? 0;
  const names = [...new Set(summaries.flatMap((summary) => [...summary[key].keys()]))];
  // One profile: largest first; two: the largest growth first (what the second does more), in µs
  // per request when the requests are known, else in shares of each profile's busy samples.
  const weight = (name) => {
    if (!b) return count(a, name);
    if (requests > 0) return count(b, name) * b.sampleUs - count(a, name) * a.sampleUs;
    return count(b, name) / b.busy - count(a, name) / a.busy;
  };
  names.sort((x, y) => weight(y) - weight(x));
  console.log(`\n| ${title} | ${files.map(() => unit).join(' | ')} |${b ? ' difference |' : ''}`);
  console.log(`|---|${files.map(() => '---:').join('|')}|${b ? '---:|' : ''}`);
  for (const name of names.slice(0, limit)) {
    const cells = summaries.map((summary) => shown(count(summary, name), summary));
    let difference = '';
    if (b && requests > 0) difference = ` ${((count(b, name) * b.sampleUs - count(a, name) * a.sampleUs) / requests).toFixed(1)} |`;
    else if (b) difference = ` ${(100 * (count(b, name) / b.busy - count(a, name) / a.busy)).toFixed(1)} points |`;
    console.log(`| ${name} | ${cells.join(' | ')} |${difference}`);
  }
}
