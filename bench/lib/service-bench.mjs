// What the single-service benches share (bench/slots.mjs, bench/rule-sets.mjs): a service started
// from a build as a child process on the project's servers, the CPU it spends read from /proc,
// percentiles, and a detail read timed while other clients load the service.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processEnv } from '../../scripts/system-env.mjs';

const require = createRequire(import.meta.url);
export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const infraKit = require(join(root, 'packages/infra/dist/index.js'));
const { freePort, uniqueName, call } = infraKit;

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** User + system CPU time of a process so far, in milliseconds (Linux). */
export function cpuMsOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/** The value at share `p` (0..1) of an ascending list. */
export const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

/**
 * A service's build (`main`, its dist/main.js) started on `infra` with a database of its own
 * (named from `database`), `env` on top; resolves once `/readyz` answers 200.
 * @param {any} infra
 * @param {any} identity
 * @param {{ main: string, database: string, nodeArgs?: string[], env?: Record<string, string> }} options
 */
export async function startService(infra, identity, { main, database, nodeArgs = [], env = {} }) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const serviceEnv = {
    ...process.env,
    ...processEnv({
      mongoUrl: infra.mongoUrl,
      amqpUrl: infra.amqpUrl,
      namespace: uniqueName('bench'),
      database: uniqueName(database),
      publicKey: identity.keys.publicKey,
      port: String(port),
    }),
    LOG_LEVEL: 'warn',
    ...env,
  };
  // Its database migrated first (the build's dist/migrate.js beside its main), as a release's job
  // does; a build from before migrations has none and builds its indexes at start.
  const migrateScript = join(dirname(main), 'migrate.js');
  if (existsSync(migrateScript)) {
    const migrate = spawnSync(process.execPath, [migrateScript, 'up'], { env: serviceEnv, stdio: ['ignore', 'ignore', 'inherit'] });
    if (migrate.status !== 0) throw new Error(`${main}: its migrations failed (exit ${migrate.status})`);
  }
  const child = spawn(process.execPath, [...nodeArgs, main], { env: serviceEnv, stdio: ['ignore', 'ignore', 'inherit'] });
  for (const deadline = Date.now() + 60_000; ;) {
    const ready = await call(url, 'GET', '/readyz').catch(() => null);
    if (ready?.status === 200) return { url, child };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${main} did not start`);
    await sleep(200);
  }
}

/**
 * The p50/p99 of an anonymous `GET detailPath`, one every 20 ms for `seconds`, while `clients`
 * clients run `load()` without pause.
 */
export async function measureDetailUnderLoad(service, load, detailPath, { clients, seconds }) {
  const stopAt = Date.now() + seconds * 1000;
  const loading = Array.from({ length: clients }, async () => {
    while (Date.now() < stopAt) await load();
  });
  const latencies = [];
  while (Date.now() < stopAt) {
    const started = performance.now();
    await call(service.url, 'GET', detailPath);
    latencies.push(performance.now() - started);
    await sleep(20);
  }
  await Promise.all(loading);
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}

/**
 * CPU of the service per request and the requests' p50/p99, `count` requests one after another
 * after `warmUp` unmeasured ones (JIT, caches); every answer must be 200. Returns the last answer too.
 */
export async function measureRequests(service, request, { count, warmUp }) {
  for (let i = 0; i < warmUp; i += 1) await request();
  const latencies = [];
  let last;
  const before = cpuMsOf(service.child.pid);
  for (let i = 0; i < count; i += 1) {
    const started = performance.now();
    last = await request();
    latencies.push(performance.now() - started);
    if (last.status !== 200) throw new Error(`${last.status} ${JSON.stringify(last.body)}`);
  }
  const cpu = (cpuMsOf(service.child.pid) - before) / count;
  latencies.sort((a, b) => a - b);
  return { cpu, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), last };
}

/** Stops the service (waiting for it to drain and exit, and write a profile when asked) and the servers. */
export async function stopService(service, infra) {
  const exited = new Promise((resolve) => service.child.once('exit', resolve));
  service.child.kill('SIGTERM');
  await exited;
  await infra.stop();
}
