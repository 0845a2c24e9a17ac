import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  describeEnd,
  exitCodeFor,
  LEAN_MALLOC_ENV,
  leanMallocEnv,
  SERVICE_MALLOC_ENV,
  runDevelopment,
  type DevInfra,
  type DevService,
} from '../src/dev-runner';
import { identifyProcess } from '../src/process-tree';
import { readRunRecord, recordProcess, StartRefused, writeRunRecord, type RunRecord } from '../src/run-record';
import { waitFor } from '../src/harness';

const FAKE = join(__dirname, 'fixtures/fake-service.cjs');
const dir = mkdtempSync(join(tmpdir(), 'dev-runner-'));
const readyDir = mkdtempSync(join(tmpdir(), 'dev-runner-ready-'));
const spawned: ChildProcess[] = [];

/** A real process standing for a service or a server; killed in afterAll whatever happens. */
function startFake(mode: 'plain' | 'deaf-to-sigterm' = 'plain'): ChildProcess {
  const child = spawn(process.execPath, [FAKE, mode], { stdio: 'ignore', env: { ...process.env, FAKE_READY_DIR: readyDir } });
  spawned.push(child);
  return child;
}

function fakeInfra(): DevInfra & { server: ChildProcess } {
  const server = startFake();
  return {
    server,
    processes: () => [{ name: 'fake-server', pid: server.pid! }],
    stop: () =>
      new Promise<void>((resolve) => {
        if (server.exitCode !== null || server.signalCode !== null) return resolve();
        server.once('exit', () => resolve());
        server.kill('SIGTERM');
      }),
  };
}

const service = (name: string, mode = 'plain'): DevService => ({
  name,
  script: FAKE,
  env: { ...process.env, FAKE_MODE: mode, FAKE_READY_DIR: readyDir },
});

/** Until a fake has its SIGTERM handler in place. */
function whenReady(pid: number) {
  return waitFor(() => existsSync(join(readyDir, String(pid))), { what: `fake process ${pid} to be ready` });
}

interface Started {
  outcome: Promise<number>;
  lines: string[];
  signals: EventEmitter;
  recordFile: string;
}

function start(recordFile: string, services: DevService[], stopTimeoutMs = 60_000): Started {
  const lines: string[] = [];
  const signals = new EventEmitter();
  const outcome = runDevelopment({
    recordFile,
    say: (line) => lines.push(line),
    startInfra: async () => fakeInfra(),
    services: () => services,
    signals,
    stopTimeoutMs,
  });
  // A test that fails early must not leave an unhandled rejection behind.
  outcome.catch(() => undefined);
  return { outcome, lines, signals, recordFile };
}

/** This run's pid file (not an earlier one's) once every service is in it. */
async function whenRunning(run: Started, count: number): Promise<RunRecord> {
  const record = await waitFor(() => readRunRecord(run.recordFile), {
    what: `${count} processes in ${run.recordFile}`,
    until: (read) => read?.runner.pid === process.pid && read.processes.length === count,
  });
  return record!;
}

async function expectAllGone(pids: number[]) {
  for (const pid of pids) expect(await identifyProcess(pid)).toBeNull();
}

afterAll(() => {
  for (const child of spawned) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  rmSync(readyDir, { recursive: true, force: true });
});

describe("glibc's malloc settings of npm start's processes", () => {
  test('two arenas for every process; the mmap and trim thresholds fixed at 128 KiB for the services; each only where the environment does not name it', () => {
    expect(leanMallocEnv({})).toEqual({ MALLOC_ARENA_MAX: '2' });
    expect(leanMallocEnv({}, SERVICE_MALLOC_ENV)).toEqual({ MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' });
    // The caller's own value wins, an empty one too (npm start drops an empty threshold first: glibc would read it as 0).
    expect(leanMallocEnv({ MALLOC_ARENA_MAX: '8' })).toEqual({});
    expect(leanMallocEnv({ MALLOC_ARENA_MAX: '' })).toEqual({});
    expect(leanMallocEnv({ MALLOC_MMAP_THRESHOLD_: '1048576' }, SERVICE_MALLOC_ENV)).toEqual({ MALLOC_TRIM_THRESHOLD_: '131072' });
    expect(leanMallocEnv({ ...LEAN_MALLOC_ENV })).toEqual({});
  });
});

describe('how a service ended, as the runner says it', () => {
  test('a signal is named and gives 128 + its number; an exit gives its code, never 0', () => {
    expect(describeEnd({ name: 'wallet', code: null, signal: 'SIGKILL' })).toBe('wallet was killed by SIGKILL');
    expect(exitCodeFor({ name: 'wallet', code: null, signal: 'SIGKILL' })).toBe(137);
    expect(describeEnd({ name: 'crm', code: 3, signal: null })).toBe('crm exited with code 3');
    expect(exitCodeFor({ name: 'crm', code: 3, signal: null })).toBe(3);
    expect(exitCodeFor({ name: 'crm', code: 0, signal: null })).toBe(1);
  });
});

describe('npm start when a service dies', () => {
  test('a service killed with SIGKILL: the others and the servers are stopped, the record removed, exit 137 naming it', async () => {
    const run = start(join(dir, 'killed.json'), [service('wallet'), service('catalog')]);
    const record = await whenRunning(run, 3);
    const wallet = record.processes.find(({ name }) => name === 'wallet')!;
    process.kill(wallet.pid, 'SIGKILL');
    await expect(run.outcome).resolves.toBe(137);
    expect(run.lines).toContain('wallet was killed by SIGKILL; stopping the others and the servers');
    await expectAllGone(record.processes.map(({ pid }) => pid));
    expect(existsSync(run.recordFile)).toBe(false);
  }, 60_000);

  test('Ctrl-C stops everything with exit 0; a second Ctrl-C kills a service stuck in its drain at once', async () => {
    const calm = start(join(dir, 'calm.json'), [service('review')]);
    const calmRecord = await whenRunning(calm, 2);
    calm.signals.emit('SIGINT');
    await expect(calm.outcome).resolves.toBe(0);
    await expectAllGone(calmRecord.processes.map(({ pid }) => pid));

    const stuck = start(join(dir, 'stuck.json'), [service('crm', 'deaf-to-sigterm')], 600_000);
    const stuckRecord = await whenRunning(stuck, 2);
    for (const { pid } of stuckRecord.processes) await whenReady(pid);
    stuck.signals.emit('SIGINT');
    await waitFor(() => stuck.lines, { what: 'the stop to begin', until: (lines) => lines.includes('stopping') });
    stuck.signals.emit('SIGINT');
    await expect(stuck.outcome).resolves.toBe(130);
    await expectAllGone(stuckRecord.processes.map(({ pid }) => pid));
  }, 60_000);
});

describe('npm start after an earlier one was killed', () => {
  /** What a killed runner leaves: its record, naming processes that still run. */
  async function givenKilledRunner(file: string, leftovers: Array<{ name: string; child: ChildProcess }>) {
    const runner = startFake();
    const runnerEntry = (await recordProcess('runner', runner.pid!))!;
    const processes = await Promise.all(leftovers.map(({ name, child }) => recordProcess(name, child.pid!)));
    writeRunRecord(file, { runner: runnerEntry, processes: processes.map((entry) => entry!) });
    runner.kill('SIGKILL');
    await waitFor(() => identifyProcess(runner.pid!), { what: 'the runner to die', until: (identity) => identity === null });
    return runnerEntry;
  }

  test('what it left running (services, then servers) is stopped, and the start goes on', async () => {
    const file = join(dir, 'stale.json');
    const oldServer = startFake();
    const oldService = startFake('deaf-to-sigterm');
    await whenReady(oldService.pid!);
    const runner = await givenKilledRunner(file, [
      { name: 'infra:mongo-java-server', child: oldServer },
      { name: 'wallet', child: oldService },
    ]);
    // The old service ignores SIGTERM: after the grace it is killed.
    const run = start(file, [service('wallet')], 1_000);
    await whenRunning(run, 2);
    await expectAllGone([oldServer.pid!, oldService.pid!]);
    expect(run.lines[0]).toBe(
      `an earlier npm start (process ${runner.pid}) ended without stopping: ` +
        `stopping infra:mongo-java-server (pid ${oldServer.pid}), wallet (pid ${oldService.pid})`,
    );
    run.signals.emit('SIGTERM');
    await expect(run.outcome).resolves.toBe(0);
  }, 60_000);

  test('a pid now used by another process is never signalled', async () => {
    const file = join(dir, 'reused.json');
    const stranger = startFake();
    await givenKilledRunner(file, []);
    const record = readRunRecord(file)!;
    const strangerNow = (await identifyProcess(stranger.pid!))!;
    // The record names the pid with another start time and command line: the process it meant is gone.
    writeRunRecord(file, { ...record, processes: [{ name: 'wallet', pid: stranger.pid!, identity: `Thu Jan  1 00:00:00 1970 ${FAKE}` }] });
    const run = start(file, []);
    await whenRunning(run, 1);
    run.signals.emit('SIGINT');
    await expect(run.outcome).resolves.toBe(0);
    expect(await identifyProcess(stranger.pid!)).toBe(strangerNow);
    expect(run.lines.join('\n')).not.toContain('earlier npm start');
  }, 60_000);

  test('while the earlier runner still runs, the start is refused saying how to stop it, touching nothing', async () => {
    const file = join(dir, 'live.json');
    const runner = startFake();
    const server = startFake();
    writeRunRecord(file, {
      runner: (await recordProcess('runner', runner.pid!))!,
      processes: [(await recordProcess('infra:mongo-java-server', server.pid!))!],
    });
    const run = start(file, [service('wallet')]);
    await expect(run.outcome).rejects.toThrow(StartRefused);
    await expect(run.outcome).rejects.toThrow(`npm start is already running as process ${runner.pid}`);
    await expect(run.outcome).rejects.toThrow(`\`kill ${runner.pid}\``);
    expect(await identifyProcess(server.pid!)).not.toBeNull();
    expect(readRunRecord(file)?.runner.pid).toBe(runner.pid);
  }, 60_000);
});
