import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { call, freePort, makeKeyPair, testServers, uniqueName } from '@mkt/infra';

const root = join(__dirname, '..', '..');
const SERVICES = ['wallet', 'catalog', 'crm', 'consultation', 'review'] as const;

export interface System {
  gateway: string;
  admin: { email: string; password: string };
  stop: () => Promise<void>;
}

/** Starts the built services and the gateway as `npm start` does, each on a free port. */
export async function startSystem(): Promise<System> {
  const { mongoUrl, amqpUrl } = testServers();
  const keys = makeKeyPair();
  const run = uniqueName('e2e');
  const admin = { email: `admin-${run}@marketplace.test`, password: 'admin-password-1' };
  const ports = Object.fromEntries(await Promise.all([...SERVICES, 'gateway'].map(async (name) => [name, await freePort()] as const)));
  // Its own exchange and queues: the system never competes with other test files for their events.
  const base = {
    ...process.env,
    MONGO_URL: mongoUrl,
    AMQP_URL: amqpUrl,
    JWT_PUBLIC_KEY: keys.publicKey,
    LOG_LEVEL: 'warn',
    BUS_NAMESPACE: run,
  };
  const children: ChildProcess[] = [];
  const start = (name: string, env: Record<string, string>) => {
    const child = spawn(process.execPath, [join(root, 'services', name, 'dist', 'main.js')], {
      env: { ...base, ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
  };
  for (const name of SERVICES)
    start(name, { PORT: String(ports[name]), MONGO_DB: `${run}_${name}`, PUBLIC_URL: `http://127.0.0.1:${ports.gateway}` });
  start('gateway', {
    PORT: String(ports.gateway),
    MONGO_DB: `${run}_gateway`,
    JWT_PRIVATE_KEY: keys.privateKey,
    ADMIN_EMAIL: admin.email,
    ADMIN_PASSWORD: admin.password,
    BCRYPT_ROUNDS: '4',
    RATE_LIMIT_IP_PER_MIN: '0',
    RATE_LIMIT_USER_PER_MIN: '0',
    ...Object.fromEntries(SERVICES.map((name) => [`${name.toUpperCase()}_URL`, `http://127.0.0.1:${ports[name]}`])),
  });
  const stop = async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise((resolve) => (child.exitCode !== null ? resolve(null) : (child.once('exit', resolve), child.kill('SIGTERM')))),
      ),
    );
  };
  const deadline = Date.now() + 60_000;
  for (const name of [...SERVICES, 'gateway']) {
    for (;;) {
      const ready = await call(`http://127.0.0.1:${ports[name]}`, 'GET', '/readyz').catch(() => null);
      if (ready?.status === 200) break;
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`${name} did not become ready`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  return { gateway: `http://127.0.0.1:${ports.gateway}`, admin, stop };
}

export async function eventually<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 5_000,
): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() - started > timeoutMs) return { value, ms: Date.now() - started };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
