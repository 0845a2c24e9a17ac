import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claimPort, CLAIM_MS, freePort, sweepClaims } from '../src/process';

// freePort picks below the kernel's ephemeral range, so a client socket of the machine cannot
// take the port between the pick and the server's bind; and what it gives can be bound.
const ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

// A claims directory of this file's own: the machine's shared one is left to the processes using it.
const dir = mkdtempSync(join(tmpdir(), 'mkt-port-claims-test-'));
const env = { ...process.env, MKT_PORT_CLAIMS_DIR: dir };
beforeAll(() => {
  process.env.MKT_PORT_CLAIMS_DIR = dir;
});
afterAll(() => {
  delete process.env.MKT_PORT_CLAIMS_DIR;
  rmSync(dir, { recursive: true, force: true });
});

test('ports below the ephemeral range, each one bindable, never the same twice', async () => {
  const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
  for (const port of ports) {
    expect(port).toBeGreaterThanOrEqual(10_000);
    expect(port).toBeLessThan(ephemeralStart);
  }
  expect(new Set(ports).size).toBe(20);
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(ports[0], '127.0.0.1', resolve);
  });
  await new Promise((resolve) => server.close(resolve));
});

describe('the claims', () => {
  const claimOf = (port: number) => join(dir, String(port));
  /** Runs `script` in another process that loads the compiled module as `m`; its stdout. */
  const inAnotherProcess = (script: string) => {
    const other = spawnSync(process.execPath, ['-e', `const m = require(${JSON.stringify(compiled)}); ${script}`], {
      encoding: 'utf8',
      env,
    });
    expect(other.stderr).toBe('');
    return other.stdout.trim();
  };

  test('a port handed out is claimed by this process: not given again here, not claimed by another process', async () => {
    const port = await freePort();
    expect(readFileSync(claimOf(port), 'utf8').trim()).toBe(String(process.pid));
    expect(claimPort(dir, port)).toBe('taken');
    expect(inAnotherProcess(`process.stdout.write(String(m.claimPort(${JSON.stringify(dir)}, ${port})));`)).toBe('taken');
  });

  test('a claim is never taken over: a claimed port is passed for another, even one whose process is gone', () => {
    writeFileSync(claimOf(9_001), `${deadPid()}\n`, { flag: 'wx' });
    expect(claimPort(dir, 9_001)).toBe('taken');
    expect(readFileSync(claimOf(9_001), 'utf8').trim()).not.toBe(String(process.pid));
  });

  // Claims below 10000, which freePort never picks: the tests' own picks cannot hold these names.
  test('the sweep removes the claims of processes gone and those older than CLAIM_MS, and keeps the rest', () => {
    writeFileSync(claimOf(9_002), `${deadPid()}\n`, { flag: 'wx' });
    writeFileSync(claimOf(9_003), `${process.ppid}\n`, { flag: 'wx' });
    writeFileSync(claimOf(9_004), '', { flag: 'wx' }); // being written: no pid yet
    sweepClaims(dir);
    expect([9_002, 9_003, 9_004].map((port) => existsSync(claimOf(port)))).toEqual([false, true, true]);
    sweepClaims(dir, Date.now() + CLAIM_MS + 1000);
    expect([9_003, 9_004].map((port) => existsSync(claimOf(port)))).toEqual([false, false]);
  });

  test("a process's claims are there while it runs and removed when it exits", () => {
    const report = inAnotherProcess(
      `m.freePort().then((p) => { const fs = require('node:fs'); process.stdout.write(JSON.stringify({ port: p, holder: fs.readFileSync(require('node:path').join(${JSON.stringify(dir)}, String(p)), 'utf8').trim(), pid: process.pid })); });`,
    );
    const { port, holder, pid } = JSON.parse(report) as { port: number; holder: string; pid: number };
    expect(holder).toBe(String(pid));
    expect(existsSync(claimOf(port))).toBe(false);
  });

  test('a claim the directory refuses (not a claim of another: the write failed) is told apart from a taken port', () => {
    const notADirectory = join(dir, 'plain-file');
    writeFileSync(notADirectory, '');
    expect(claimPort(notADirectory, 9_005)).toBe('unusable');
    writeFileSync(claimOf(9_006), `${process.ppid}\n`, { flag: 'wx' });
    expect(claimPort(dir, 9_006)).toBe('taken');
  });

  test('a claims directory that cannot be used leaves the bind check alone: a port below the ephemeral range still', async () => {
    const notADirectory = join(dir, 'file');
    writeFileSync(notADirectory, '');
    process.env.MKT_PORT_CLAIMS_DIR = notADirectory;
    try {
      const port = await freePort();
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(ephemeralStart);
    } finally {
      process.env.MKT_PORT_CLAIMS_DIR = dir;
    }
  });
});

/** A pid no process has: one that ran and exited. */
const deadPid = () => spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
// The compiled module, as another process of the machine loads it (the runner builds before the tests).
const compiled = join(__dirname, '../dist/process.js');
