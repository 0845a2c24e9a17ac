import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort, testEnv, testIdentity, waitFor } from '@mkt/infra';

// The process of a release as an orchestrator runs it: `dist/migrate.js` (the one-shot job), then
// `dist/main.js` (the pods). A pod never builds its database's shape; on a database behind the
// migrations it knows it exits at once, saying which and what to run.

const identity = testIdentity();
const env = testEnv('catalog_migrate');
const dist = (file: string) => join(__dirname, '..', 'dist', file);

function run(file: string, args: string[], extra: Record<string, string> = {}) {
  const child = spawn(process.execPath, [dist(file), ...args], {
    env: { ...process.env, ...env.serviceEnv(identity.keys.publicKey), MONGO_DB: env.dbName, LOG_LEVEL: 'info', ...extra },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // 'close', not 'exit': the output a process wrote before it ended may still be in the pipe at its exit.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

test('a pod on an unmigrated database exits naming the migrations; migrate.js up, status and down; then the pod serves', async () => {
  const port = await freePort();
  const refused = run('main.js', [], { PORT: String(port) });
  expect(await refused.exited).toBe(1);
  expect(refused.output()).toContain(`database ${env.dbName} is behind this release: migrations not applied: 0001-indexes`);
  expect(refused.output()).toContain('dist/migrate.js up');

  const before = run('migrate.js', ['status']);
  expect(await before.exited).toBe(0);
  expect(before.output()).toMatch(/pending {1,2}0001-indexes \[irreversible\]/);
  expect(before.output()).toMatch(/pending {1,2}0002-outbox-index \[irreversible\]/);
  expect(before.output()).toMatch(/pending {1,2}0003-deletions \[irreversible\]/);
  expect(before.output()).toMatch(/pending {1,2}0004-listing-indexes$/m);

  const [first, second] = [run('migrate.js', ['up']), run('migrate.js', ['up'])];
  expect(await Promise.all([first.exited, second.exited])).toEqual([0, 0]);
  const said = [first.output(), second.output()].join('\n');
  expect(said.match(/applied: 0001-indexes/g)).toHaveLength(1);
  expect(said).toContain('nothing to apply: the database is up to date');

  const after = run('migrate.js', ['status']);
  expect(await after.exited).toBe(0);
  expect(after.output()).toMatch(/applied 0001-indexes \d{4}-\d\d-\d\dT[^ ]+ \(\d+ ms\) \[irreversible\]/);

  // The listings' indexes can be undone (the previous release does without them); the tombstones cannot.
  const down = run('migrate.js', ['down']);
  expect(await down.exited).toBe(0);
  expect(down.output()).toContain('undone: 0004-listing-indexes');
  const further = run('migrate.js', ['down']);
  expect(await further.exited).toBe(1);
  expect(further.output()).toContain('migration 0003-deletions cannot be undone');
  const again = run('migrate.js', ['up']);
  expect(await again.exited).toBe(0);
  expect(again.output()).toContain('applied: 0004-listing-indexes');

  const pod = run('main.js', [], { PORT: String(port) });
  try {
    const ready = () =>
      fetch(`http://127.0.0.1:${port}/readyz`).then(
        (res) => res.status,
        () => 0,
      );
    await waitFor(ready, { what: 'the pod ready', timeoutMs: 30_000, until: (status) => status === 200 });
  } finally {
    pod.child.kill('SIGTERM');
    await pod.exited;
  }
});
