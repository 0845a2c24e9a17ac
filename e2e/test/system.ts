import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync } from 'node:fs';
import { join } from 'node:path';
import { call, freePort, makeKeyPair, testServers, uniqueName } from '@mkt/infra';
import type * as SystemEnv from '../../scripts/system-env.mjs' with { 'resolution-mode': 'import' };
import { startBalancer, type Balancer } from './tcp-balancer';

/** The environment of each process (an ES module: jest loads it through SWC, e2e/jest.config.js). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { systemEnv } = require('../../scripts/system-env.mjs') as typeof SystemEnv;

const root = join(__dirname, '..', '..');
const SERVICES = ['wallet', 'catalog', 'crm', 'consultation', 'review'] as const;

export type ServiceName = (typeof SERVICES)[number];
export type ProcessName = ServiceName | 'gateway';

/** One service process of a system: its address, and how to stop, kill and start it again. */
export interface ServiceProcess {
  name: ProcessName;
  url: string;
  pid: () => number | undefined;
  running: () => boolean;
  /** Sends a signal and waits for the process to exit; resolves with its exit code or signal. */
  kill: (signal?: NodeJS.Signals) => Promise<number | string | null>;
  /** Starts it again (same port, database and namespace) and waits until `/readyz` answers 200 with the broker up. */
  start: () => Promise<void>;
}

export interface SystemOptions {
  /** Servers other than the shared test ones (a broker to stop, a database to restart). */
  mongoUrl?: string;
  amqpUrl?: string;
  /** Extra environment of every process, and per process. */
  env?: Record<string, string>;
  envOf?: Partial<Record<ProcessName, Record<string, string>>>;
  /** Where the gateway sends a service's traffic instead of the started service. */
  upstreamOverrides?: Partial<Record<ServiceName, string>>;
  /** How long to wait for every process to be ready and connected to the broker. */
  readyTimeoutMs?: number;
  /**
   * Instances of every service and of the gateway (default 1). With more than one, each
   * service's instances are reached through a round-robin TCP balancer (tcp-balancer.ts, a
   * Kubernetes Service's stand-in): the gateways' upstream URLs and the consultation's
   * WALLET_URL point at the balancers; the gateways are listed in `gateways`.
   */
  instances?: number;
  /**
   * The key set of a deployment: the gateway signs with the keys of this directory (`<kid>.pem`
   * and `current`, re-read every second) and every service verifies by `kid` against the first
   * gateway's JWKS (`JWT_JWKS_URL`, keys cached for `cacheSeconds`) instead of one public key.
   */
  keyDirectory?: { dir: string; cacheSeconds: number };
}

export interface System {
  gateway: string;
  admin: { email: string; password: string };
  stop: () => Promise<void>;
  /** BUS_NAMESPACE of this system: its exchange is `<namespace>.marketplace.events`. */
  namespace: string;
  mongoUrl: string;
  amqpUrl: string;
  /** The database of a process (`MONGO_DB`). */
  dbName: (name: ProcessName) => string;
  /** The first instance of each process. */
  processes: Record<ProcessName, ServiceProcess>;
  /** Every instance of each process (one each unless `instances` was given). */
  replicas: Record<ProcessName, ServiceProcess[]>;
  /** Every gateway's address (`gateway` is the first). */
  gateways: string[];
  /** The balancers in front of each service's instances (`instances` > 1 only). */
  balancers: Partial<Record<ServiceName, Balancer>>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ready to serve, and connected to the broker: `/readyz` is 200 without the broker (the outbox
 * keeps events), but a test's first event needs the consumers' queues declared.
 */
/** `services/<name>/dist/migrate.js up` on the process's database; fails with what it said. */
async function migrateDatabase(name: ProcessName, env: NodeJS.ProcessEnv): Promise<void> {
  const child = spawn(process.execPath, [join(root, 'services', name, 'dist', 'migrate.js'), 'up'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the migrations of ${name} failed (exit ${code}): ${output.slice(-2_000)}`);
}

async function waitReady(url: string, name: string, deadline: number, child: () => ChildProcess | null): Promise<void> {
  for (;;) {
    const ready = await call(url, 'GET', '/readyz').catch(() => null);
    if (ready?.status === 200 && ready.body?.data?.checks?.broker === 'up') return;
    const current = child();
    if (current && current.exitCode !== null) throw new Error(`${name} exited with code ${current.exitCode} before it was ready`);
    if (Date.now() > deadline) throw new Error(`${name} did not become ready`);
    await sleep(200);
  }
}

/** Starts the built services and the gateway as `npm start` does, each on a free port. */
export async function startSystem(options: SystemOptions = {}): Promise<System> {
  const shared = options.mongoUrl && options.amqpUrl ? null : testServers();
  const mongoUrl = options.mongoUrl ?? shared!.mongoUrl;
  const amqpUrl = options.amqpUrl ?? shared!.amqpUrl;
  const keys = makeKeyPair();
  const run = uniqueName('e2e');
  const admin = { email: `admin-${run}@marketplace.test`, password: 'admin-password-1' };
  const names: ProcessName[] = [...SERVICES, 'gateway'];
  const instances = Math.max(1, options.instances ?? 1);
  const indexes = Array.from({ length: instances }, (_, i) => i);
  // `wallet` for the first instance (as with one), `wallet-2`, ... for the others.
  const unitsOf = (name: ProcessName) => indexes.map((i) => (i === 0 ? name : `${name}-${i + 1}`));
  const units = names.flatMap(unitsOf);
  const ports = Object.fromEntries(await Promise.all(units.map(async (unit) => [unit, await freePort()] as const))) as Record<
    string,
    number
  >;
  const url = (unit: string) => `http://127.0.0.1:${ports[unit]}`;
  const balancers: Partial<Record<ServiceName, Balancer>> = {};
  if (instances > 1) for (const name of SERVICES) balancers[name] = await startBalancer(unitsOf(name).map((unit) => ports[unit]!));
  /** Where a service is reached: its one instance, or the balancer in front of its instances. */
  const serviceUrl = (name: ServiceName) => balancers[name]?.url ?? url(name);
  const dbName = (name: ProcessName) => `${run}_${name}`;
  // Its own exchange and queues: the system never competes with other test files for their events.
  const keySet = options.keyDirectory;
  const environments = systemEnv({
    // The consultation reaches the wallet, and the gateway every service, through its balancer when there is one.
    url: (name) => (name === 'gateway' ? url('gateway') : serviceUrl(name)),
    listen: (name) => String(ports[name]),
    mongoUrl,
    amqpUrl,
    namespace: run,
    database: dbName,
    keys: keySet ? { publicKey: '', privateKey: '' } : keys,
    internalToken: randomBytes(24).toString('hex'),
    admin,
    // Top-ups come back to http://localhost:3000 and the browser test's pages are cross-origin: the services' defaults.
    checkout: false,
    // No metrics listener unless a test asks for one (on a port of its own): systems run side by
    // side, and two gateways of one system would both ask for 9464.
    unlimited: true,
    common: {
      LOG_LEVEL: 'warn',
      ...(keySet
        ? {
            JWT_JWKS_URL: `${url('gateway')}/v1/auth/.well-known/jwks.json`,
            JWT_JWKS_CACHE_SECONDS: String(keySet.cacheSeconds),
          }
        : {}),
      ...options.env,
    },
  });
  const envOf: Record<ProcessName, Record<string, string>> = {
    ...environments,
    gateway: {
      ...environments.gateway,
      ...(keySet ? { JWT_KEYS_DIR: keySet.dir, JWT_KEYS_RELOAD_SECONDS: '1' } : {}),
      BCRYPT_ROUNDS: '4',
      ...Object.fromEntries(
        SERVICES.flatMap((name) => {
          const override = options.upstreamOverrides?.[name];
          return override ? [[`${name.toUpperCase()}_URL`, override]] : [];
        }),
      ),
    },
  };
  const children = new Map<string, ChildProcess>();
  const spawnProcess = (name: ProcessName, unit: string) => {
    // E2E_LOG_DIR keeps each process's log (pino on stdout) for a failure's post-mortem.
    const logDir = process.env.E2E_LOG_DIR;
    const out = logDir ? openSync(join(logDir, `${run}-${unit}.log`), 'a') : 'ignore';
    // --throw-deprecation: a Node API the services or their dependencies use that the running
    // Node deprecates fails the tests, not only a log line.
    const child = spawn(process.execPath, ['--throw-deprecation', join(root, 'services', name, 'dist', 'main.js')], {
      env: { ...process.env, ...envOf[name], PORT: String(ports[unit]), ...options.envOf?.[name] },
      stdio: ['ignore', out, 'inherit'],
    });
    children.set(unit, child);
  };
  const kill = (unit: string, signal: NodeJS.Signals = 'SIGTERM') => {
    const child = children.get(unit);
    if (!child || child.exitCode !== null || child.signalCode !== null)
      return Promise.resolve(child?.exitCode ?? child?.signalCode ?? null);
    return new Promise<number | string | null>((resolve) => {
      child.once('exit', (code, killedBy) => resolve(code ?? killedBy));
      child.kill(signal);
    });
  };
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const processOf = (name: ProcessName, unit: string): ServiceProcess => ({
    name,
    url: url(unit),
    pid: () => children.get(unit)?.pid,
    running: () => {
      const child = children.get(unit);
      return !!child && child.exitCode === null && child.signalCode === null;
    },
    kill: (signal?: NodeJS.Signals) => kill(unit, signal),
    start: async () => {
      await kill(unit, 'SIGKILL');
      spawnProcess(name, unit);
      await waitReady(url(unit), unit, Date.now() + readyTimeoutMs, () => children.get(unit) ?? null);
    },
  });
  const replicas = Object.fromEntries(names.map((name) => [name, unitsOf(name).map((unit) => processOf(name, unit))])) as Record<
    ProcessName,
    ServiceProcess[]
  >;
  const processes = Object.fromEntries(names.map((name) => [name, replicas[name][0]!])) as Record<ProcessName, ServiceProcess>;
  // Every database migrated first, as a release's migrate job does before its pods start.
  await Promise.all(names.map((name) => migrateDatabase(name, { ...process.env, ...envOf[name], ...options.envOf?.[name] })));
  for (const name of names) for (const unit of unitsOf(name)) spawnProcess(name, unit);
  const stop = async () => {
    await Promise.all(units.map((unit) => kill(unit, 'SIGTERM')));
    await Promise.all(Object.values(balancers).map((balancer) => balancer.close()));
  };
  const deadline = Date.now() + readyTimeoutMs;
  try {
    for (const unit of units) await waitReady(url(unit), unit, deadline, () => children.get(unit) ?? null);
  } catch (err) {
    await Promise.all(units.map((unit) => kill(unit, 'SIGKILL')));
    await Promise.all(Object.values(balancers).map((balancer) => balancer.close()));
    throw err;
  }
  return {
    gateway: url('gateway'),
    gateways: unitsOf('gateway').map(url),
    admin,
    stop,
    namespace: run,
    mongoUrl,
    amqpUrl,
    dbName,
    processes,
    replicas,
    balancers,
  };
}
export async function eventually<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5_000): Promise<{ value: T }> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() - started > timeoutMs) return { value };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
