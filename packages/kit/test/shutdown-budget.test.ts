import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDisposableBroker, startDisposableMongo, uniqueName, type BrokerHandle, type LocalServer } from '@mkt/infra';

// The shutdown budget: a process exits by itself within SHUTDOWN_TIMEOUT_MS of SIGTERM whatever
// its database and broker do. Here both stop at the moment the SIGTERM arrives (compose's `down`
// stops every container at once). The process exits 0 when every closer ended, 1 when the
// timeout ended it — also when a thread of libuv's pool is stuck (a DNS lookup of a host that has
// just vanished), which `process.exit` waits for: Node joins the pool's threads on exit.

const TIMEOUT_MS = 3_000;
/** Generous: a process past it has not kept its budget (before the fix it never exits at all). */
const MARGIN_MS = 4_000;

interface Service {
  name: string;
  child: ChildProcess;
  /** Its exit code, or the signal that ended it. */
  exited: Promise<number | string | null>;
}

let dir: string;
let mongo: LocalServer | null = null;
let broker: BrokerHandle;
const services: Service[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kit-shutdown-'));
  mongo = await startDisposableMongo({ kind: 'memory' });
  broker = await startDisposableBroker();
}, 120_000);

afterAll(async () => {
  for (const { child } of services) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  // Lets a thread still blocked on a FIFO go (a writer opens it), so nothing is left behind.
  for (const fifo of ['stuck-0', 'stuck-1']) spawnSync('sh', ['-c', `exec 3>"${join(dir, fifo)}"`], { timeout: 1_000 });
  await mongo?.stop();
  await broker?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

async function startService(name: string, env: Record<string, string>): Promise<Service> {
  const child = spawn(process.execPath, [join(__dirname, 'fixtures', 'shutdown-service.cjs')], {
    env: {
      ...process.env,
      MONGO_URL: mongo!.url,
      AMQP_URL: broker.url,
      BUS_NAMESPACE: uniqueName('shutdown'),
      SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS),
      SHUTDOWN_GRACE_MS: '200',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before listening`)));
  });
  const service: Service = { name, child, exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code))) };
  services.push(service);
  return service;
}

function mkfifo(name: string): string {
  const path = join(dir, name);
  const made = spawnSync('mkfifo', [path]);
  if (made.status !== 0) throw new Error(`mkfifo ${path} failed: ${String(made.stderr)}`);
  return path;
}

test('database and broker stop with the SIGTERM: each process exits by itself within SHUTDOWN_TIMEOUT_MS', async () => {
  const started = await Promise.all([
    startService('plain', {}),
    startService('thread pool stuck', { STUCK_THREAD_POOL: mkfifo('stuck-0') }),
    startService('closer stuck, thread pool stuck', { STUCK_CLOSER: '1', STUCK_THREAD_POOL: mkfifo('stuck-1') }),
  ]);
  // Connected to the broker (its queues and exchanges declared) before everything stops.
  await new Promise((resolve) => setTimeout(resolve, 1_000));

  const stopped = Promise.all([mongo!.stop(), broker.stopBroker()]);
  for (const { child } of started) child.kill('SIGTERM');
  mongo = null;
  const deadline = (service: Service) =>
    Promise.race([
      service.exited,
      new Promise<'still running'>((resolve) => setTimeout(resolve, TIMEOUT_MS + MARGIN_MS, 'still running').unref()),
    ]);
  const outcomes = await Promise.all(
    started.map(async (service) => {
      return { name: service.name, exit: await deadline(service) };
    }),
  );
  await stopped;
  expect(outcomes).toEqual([
    { name: 'plain', exit: 0 },
    // The closers end (the servers are gone, nothing waits for them): exit 0 despite the stuck thread.
    { name: 'thread pool stuck', exit: 0 },
    // Only the timeout ends it.
    { name: 'closer stuck, thread pool stuck', exit: 1 },
  ]);
}, 60_000);
