import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, isRoot, run, startProcess, stopProcess, waitForPort, which, type Say } from './process';

export const FERRETDB_VERSION = 'v1.24.2';
const FERRETDB_MODULE = 'github.com/FerretDB/FerretDB';

export interface LocalServer {
  url: string;
  description: string;
  stop: () => Promise<void>;
}

async function goBinDir(): Promise<string | null> {
  const go = which('go', ['/usr/local/go/bin']);
  if (!go) return null;
  return join((await run(go, ['env', 'GOPATH'])).trim(), 'bin');
}

export async function findMongoBinary(): Promise<{ kind: 'mongod' | 'ferretdb'; path: string } | null> {
  const mongod = which('mongod');
  if (mongod) return { kind: 'mongod', path: mongod };
  const binDir = await goBinDir();
  const ferretdb = which('ferretdb', binDir ? [binDir] : []);
  return ferretdb ? { kind: 'ferretdb', path: ferretdb } : null;
}

/**
 * Builds FerretDB 1.24.2 from the Go module proxy. A plain `go install …@v1.24.2` is not
 * enough: the module as published has no build/version/version.txt, and the binary then
 * panics at start ("Invalid build/version/version.txt file content"); the proxy may also
 * refuse the deprecation lookup `go install` makes. So: download the module, copy it, write
 * the version file as FerretDB's own build does, and build from the copy.
 */
export async function installFerretDb(say: Say): Promise<string> {
  const go = which('go', ['/usr/local/go/bin']);
  if (!go) throw new Error('Go is not installed, so FerretDB cannot be built');
  say(`building FerretDB ${FERRETDB_VERSION} with ${go} (a minute or two)`);
  const info = JSON.parse(await run(go, ['mod', 'download', '-json', `${FERRETDB_MODULE}@${FERRETDB_VERSION}`])) as { Dir: string };
  const work = mkdtempSync(join(tmpdir(), 'ferretdb-src-'));
  try {
    await run('cp', ['-r', `${info.Dir}/.`, work]);
    await run('chmod', ['-R', 'u+w', work]);
    await run('sh', ['-c', `printf '%s\\n' ${FERRETDB_VERSION} > build/version/version.txt`], { cwd: work });
    const binDir = (await goBinDir())!;
    await run('mkdir', ['-p', binDir]);
    const target = join(binDir, 'ferretdb');
    await run(go, ['build', '-o', target, './cmd/ferretdb'], { cwd: work, env: { ...process.env, GOFLAGS: '-buildvcs=false' } });
    return target;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Starts mongod or FerretDB (SQLite handler) on a free port with data in a temporary folder. */
export async function startLocalMongo(binary: { kind: 'mongod' | 'ferretdb'; path: string }): Promise<LocalServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), `${binary.kind}-`));
  const args =
    binary.kind === 'mongod'
      ? ['--dbpath', dir, '--port', String(port), '--bind_ip', '127.0.0.1', '--quiet']
      : [
          '--handler=sqlite',
          `--sqlite-url=file:${dir}/`,
          `--listen-addr=127.0.0.1:${port}`,
          '--telemetry=disable',
          `--state-dir=${dir}`,
          '--debug-addr=-',
          '--log-level=error',
        ];
  const { child, output } = startProcess(binary.path, args);
  try {
    await waitForPort(port, 30_000, child);
  } catch (err) {
    await stopProcess(child);
    throw new Error(`${binary.kind} did not start: ${(err as Error).message}\n${output()}`);
  }
  const query = binary.kind === 'ferretdb' ? '?retryWrites=false' : '';
  return {
    url: `mongodb://127.0.0.1:${port}/${query}`,
    description: `${binary.kind} (${binary.path}) on 127.0.0.1:${port}, data in ${dir}`,
    stop: async () => {
      await stopProcess(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function canInstall(): boolean {
  return isRoot();
}
