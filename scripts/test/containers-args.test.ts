import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

// `npm run images`' selection (scripts/containers.mjs --only / --source): an option without its
// value is refused before any step runs, never read as "every service" or "this checkout". A
// `podman` first on PATH records any call, so the test also proves nothing reached podman.
const root = join(__dirname, '..', '..');
let bin: string;
let calls: string;

beforeAll(() => {
  bin = mkdtempSync(join(tmpdir(), 'mkt-containers-args-'));
  calls = join(bin, 'calls');
  for (const tool of ['podman', 'podman-compose', 'sudo', 'apt-get']) {
    writeFileSync(join(bin, tool), `#!/bin/sh\necho "${tool} $*" >> '${calls}'\nexit 1\n`);
    chmodSync(join(bin, tool), 0o755);
  }
});
afterAll(() => rmSync(bin, { recursive: true, force: true }));

function containers(...args: string[]) {
  return spawnSync(process.execPath, [join(root, 'scripts', 'containers.mjs'), ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` },
  });
}

test.each([
  [['build', '--only'], /--only needs a value/],
  [['build', '--only', ''], /--only needs a value/],
  [['build', '--only', '--source', root], /--only needs a value/],
  [['build', '--only', ','], /--only ,: no service named/],
  [['build', '--only', 'wallet', '--source'], /--source needs a value/],
  [['build', '--source', ' '], /--source needs a value/],
  [['--source', '--only', 'wallet', 'build'], /--source needs a value/],
])('containers.mjs %j exits 2, saying why, before any podman call', (args, said) => {
  const ran = containers(...args);
  expect(ran.stderr).toMatch(said);
  expect(ran.status).toBe(2);
  expect(existsSync(calls)).toBe(false);
});
