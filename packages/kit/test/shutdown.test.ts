import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { testServers, waitFor } from '@mkt/infra';

// SIGTERM: `/readyz` answers 503 at once; requests in flight and new ones during
// SHUTDOWN_GRACE_MS are still served; then the listener closes and the process exits 0.

const GRACE_MS = 1_500;
let child: ChildProcess;
let url: string;

beforeAll(async () => {
  child = spawn(process.execPath, [join(__dirname, 'fixtures', 'drain-service.cjs')], {
    env: { ...process.env, AMQP_URL: testServers().amqpUrl, SHUTDOWN_GRACE_MS: String(GRACE_MS), SHUTDOWN_TIMEOUT_MS: '15000' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  url = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`the service exited with ${code} before listening`)));
  });
});
afterAll(() => {
  if (child.exitCode === null) child.kill('SIGKILL');
});

const readyz = async () => {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: (await res.json()) as { checks?: Record<string, string>; data?: { checks: Record<string, string> } } };
};

test('readiness turns 503 at once while in-flight and new requests are served through the grace period', async () => {
  const ready = await waitFor(readyz, { what: 'ready with the broker connected', until: (r) => r.body.data?.checks.broker === 'up' });
  expect(ready).toMatchObject({ status: 200, body: { data: { checks: { process: 'up', broker: 'up' } } } });

  const inFlight = fetch(`${url}/slow?ms=${GRACE_MS + 500}`).then(async (res) => ({ status: res.status, body: await res.json() }));
  await new Promise((resolve) => setTimeout(resolve, 100));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const signalledAt = Date.now();
  child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 100));

  const draining = await readyz();
  expect(draining.status).toBe(503);
  expect(draining.body.checks).toMatchObject({ process: 'draining' });
  // A new request during the grace period, on a new connection, is served.
  await new Promise((resolve) => setTimeout(resolve, GRACE_MS / 3));
  const fresh = await fetch(`${url}/fast`);
  expect(fresh.status).toBe(200);
  expect(await fresh.json()).toMatchObject({ success: true });
  expect(fresh.headers.get('connection')).toBe('close');
  expect(Date.now() - signalledAt).toBeLessThan(GRACE_MS);

  expect(await inFlight).toEqual({ status: 200, body: { success: true, data: { slept: GRACE_MS + 500 } } });
  expect(await exited).toBe(0);
  await expect(fetch(`${url}/fast`)).rejects.toThrow();
});
