// A real S3-compatible server for the tests of the S3 copy of backups: moto's server (PyPI
// `moto[server]`, pinned), installed the first time into .tools/s3/venv-moto<version>/ and run on
// 127.0.0.1 only. moto implements the S3 REST API the AWS SDK speaks (path-style buckets, SigV4,
// ListObjectsV2 with delimiters, x-amz-checksum-sha256), in one process with no state on disk.
// No `import.meta` here: the jest tests load this module through SWC as CommonJS.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './net.mjs';

export const MOTO_VERSION = '5.2.5';

/**
 * The moto_server binary, installed into `<toolsDir>/s3/` when missing.
 * @param {string} toolsDir
 * @param {(line: string) => void} [log] told before an install
 */
export function ensureMoto(toolsDir, log = () => undefined) {
  const venv = join(toolsDir, 's3', `venv-moto${MOTO_VERSION}`);
  const bin = join(venv, 'bin', 'moto_server');
  const works = () => {
    try {
      execFileSync(join(venv, 'bin', 'python'), ['-c', 'import moto.server'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (existsSync(bin) && works()) return bin;
  log(`installing moto[server]==${MOTO_VERSION} into ${venv}`);
  rmSync(venv, { recursive: true, force: true });
  execFileSync('python3', ['-m', 'venv', venv], { stdio: 'ignore' });
  execFileSync(join(venv, 'bin', 'pip'), ['install', '-q', '--disable-pip-version-check', `moto[server]==${MOTO_VERSION}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return bin;
}

/** Starts moto_server on a free loopback port; resolves `{ endpoint, stop }` once it answers. */
export async function startMoto(toolsDir) {
  const bin = ensureMoto(toolsDir);
  const port = await freePort();
  const child = spawn(bin, ['-H', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve(undefined);
      child.once('exit', () => resolve(undefined));
      child.kill('SIGTERM');
    });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited ${child.exitCode}: ${stderr}`);
    try {
      const res = await fetch(`${endpoint}/moto-api/`);
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`moto_server did not answer on ${endpoint} within 30 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { endpoint, stop };
}
