import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A process's last line before it ends (a failed migration, a refused start) is written: the
// default destination of kit's logger writes stdout synchronously, not on libuv's thread pool,
// which a process ending by `exitProcess` does not wait for. Here every thread of the pool is
// busy (four long key derivations) when the line is logged and the process ends at once.
// kit's built modules, by file: `exitProcess` is a kit internal, not in its exports map.
const logger = join(__dirname, '..', 'dist', 'logger.js');
const shutdown = join(__dirname, '..', 'dist', 'shutdown.js');

function lastLineOf(script: string): { status: number | null; stdout: string } {
  const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stdout: result.stdout };
}

test.each([1, 2, 3])('the line logged right before exitProcess is on stdout, the thread pool busy (run %i)', () => {
  const { status, stdout } = lastLineOf(`
    const { pbkdf2 } = require('node:crypto');
    const { createLogger } = require(${JSON.stringify(logger)});
    const { exitProcess } = require(${JSON.stringify(shutdown)});
    const log = createLogger('exit-test', 'info');
    for (let i = 0; i < 4; i += 1) pbkdf2('secret', 'salt', 2_000_000, 64, 'sha512', () => undefined);
    setTimeout(() => {
      log.info('started');
      log.fatal({ reason: 'the database is behind' }, 'migration 0002 cannot be undone');
      exitProcess(1);
    }, 50);
  `);
  expect(status).toBe(1);
  expect(stdout).toContain('"msg":"started"');
  expect(stdout).toContain('migration 0002 cannot be undone');
});

test('the batched stdout flushes (and so fsyncs) only after lines were written, not while the process is idle', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mkt-log-'));
  const out = join(dir, 'stdout.log');
  try {
    const fd = openSync(out, 'w');
    const result = spawnSync(
      process.execPath,
      [
        '-e',
        `
        const fs = require('node:fs');
        let syncs = 0;
        const fsyncSync = fs.fsyncSync;
        fs.fsyncSync = (fd) => { syncs += 1; return fsyncSync(fd); };
        const { bufferedStdout, createLogger } = require(${JSON.stringify(logger)});
        const log = createLogger('flush-test', 'info', bufferedStdout());
        setTimeout(() => {
          const idle = syncs;
          log.info('one line');
          setTimeout(() => {
            const written = syncs;
            setTimeout(() => { process.stderr.write(JSON.stringify({ idle, written, after: syncs })); process.exit(0); }, 1100);
          }, 400);
        }, 1100);
      `,
      ],
      { stdio: ['ignore', fd, 'pipe'], encoding: 'utf8', timeout: 30_000 },
    );
    closeSync(fd);
    expect(result.status).toBe(0);
    const counts = JSON.parse(result.stderr) as { idle: number; written: number; after: number };
    expect(counts).toEqual({ idle: 0, written: 1, after: 1 });
    expect(readFileSync(out, 'utf8')).toContain('"msg":"one line"');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
