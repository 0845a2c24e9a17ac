import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import type { EventEmitter } from 'node:events';
import { killTree } from './process-tree';
import { recordProcess, recoverLeftovers, removeRunRecord, writeRunRecord, type RecordedProcess } from './run-record';
import type { OwnProcess, Say } from './process';

/**
 * glibc's malloc setting for every process `npm start` starts (bench/README.md, "Memory of the
 * stack after the load"): MALLOC_ARENA_MAX, at most two arenas per process instead of eight per
 * core (each service ≈ 15 MB less at rest; the JVM's compiler threads no longer keep theirs). The
 * runner's own malloc has read its environment before it can set it: it reaches the processes it
 * starts.
 */
export const LEAN_MALLOC_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/**
 * glibc's malloc settings for `npm start`'s Node services only (bench/README.md, "Step 6"):
 * MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ at glibc's own defaults (128 KiB), fixed. Left
 * dynamic, every freed block above the mmap threshold raises it (up to 32 MiB) and the trim
 * threshold to twice that, so what a process frees at the top of its heap stays resident: the
 * gateway kept ≈ 8 MB more after the write load. Fixed, every block above 128 KiB is its own
 * mapping, made and unmapped each time (system calls and page faults a large allocation would not
 * otherwise pay), which the services' requests rarely allocate; not for RabbitMQ (its node's allocations go to
 * malloc, `LEAN_RABBIT_ERL_ARGS`, large binaries among them) nor the JVM (its heap is its own
 * mapping), where it was not measured.
 */
export const SERVICE_MALLOC_ENV: Readonly<Record<string, string>> = {
  MALLOC_MMAP_THRESHOLD_: '131072',
  MALLOC_TRIM_THRESHOLD_: '131072',
};

/**
 * The `settings` `env` does not name: a value of the caller's own wins, an empty one too (an empty
 * `MALLOC_ARENA_MAX` is glibc's default). glibc reads an empty threshold as 0, though (a mapping
 * per allocation): `npm start` drops an empty `SERVICE_MALLOC_ENV` name from its environment
 * first, so the services get 128 KiB (glibc's adaptive thresholds have no value: any setting
 * fixes them).
 */
export function leanMallocEnv(
  env: NodeJS.ProcessEnv,
  settings: Readonly<Record<string, string>> = LEAN_MALLOC_ENV,
): Record<string, string> {
  return Object.fromEntries(Object.entries(settings).filter(([name]) => env[name] === undefined));
}

/** One service process of `npm start`: `node <script>` with its environment. */
export interface DevService {
  name: string;
  script: string;
  env: NodeJS.ProcessEnv;
}

/** What the runner needs of the servers it started (`provideInfra`'s answer is one). */
export interface DevInfra {
  stop: () => Promise<void>;
  processes: () => OwnProcess[];
}

export interface DevRunOptions<I extends DevInfra> {
  /** The pid file (`.dev/run.json`): how the next start finds what this one left running. */
  recordFile: string;
  say: Say;
  startInfra: () => Promise<I>;
  services: (infra: I) => DevService[];
  cwd?: string;
  /** Extra node flags for every service (SERVICE_NODE_ARGS). */
  nodeArgs?: string[];
  /** Where SIGINT and SIGTERM come from (the process; a test passes its own emitter). */
  signals?: EventEmitter;
  /** How long a service (or one left behind by an earlier run) may drain after SIGTERM before it is killed. */
  stopTimeoutMs?: number;
  /** Called once every service has been started. */
  onRunning?: () => void;
}

/** How a process ended: an exit code, or the signal that killed it (then the code is null). */
export interface ChildEnd {
  name: string;
  code: number | null;
  signal: NodeJS.Signals | null;
}

export function describeEnd({ name, code, signal }: ChildEnd): string {
  return signal ? `${name} was killed by ${signal}` : `${name} exited with code ${code}`;
}

/** The runner's exit code after a service died: its code, or 128 + the signal's number as a shell says it. */
export function exitCodeFor({ code, signal }: ChildEnd): number {
  if (signal) return 128 + (constants.signals[signal] ?? 0);
  return code && code > 0 ? code : 1;
}

/** Exit code of a runner stopped at once by a second Ctrl-C (128 + SIGINT). */
const INTERRUPTED = 130;

interface Running {
  name: string;
  child: ChildProcess;
  ended: boolean;
  exited: Promise<void>;
}

/**
 * Runs the services of `npm start` over the servers `startInfra` provides, until Ctrl-C or until
 * a service dies: then it stops the others and the servers and resolves with the exit code (0
 * after Ctrl-C; after a death, the service's code or 128 + its signal, and a line saying which
 * died and how). A second Ctrl-C kills everything at once. Every process it starts is written
 * to `recordFile` first, so a start after this runner was killed stops what it left behind.
 */
export async function runDevelopment<I extends DevInfra>(options: DevRunOptions<I>): Promise<number> {
  const { say, recordFile, stopTimeoutMs = 30_000 } = options;
  const signals = options.signals ?? process;
  await recoverLeftovers(recordFile, say, stopTimeoutMs);
  const runner = await recordProcess('runner', process.pid);
  if (!runner) throw new Error(`cannot read this process's own command line with ps (pid ${process.pid})`);
  const recorded: RecordedProcess[] = [];
  const record = async (name: string, pid: number | undefined) => {
    const entry = pid === undefined ? null : await recordProcess(name, pid);
    if (entry) recorded.push(entry);
    if (finished) return;
    writeRunRecord(recordFile, { runner, processes: recorded });
  };
  writeRunRecord(recordFile, { runner, processes: recorded });

  const running: Running[] = [];
  let infra: I | null = null;
  let stopping = false;
  let interrupted = false;
  let forced = false;
  let finished = false;
  let settle: (code: number) => void = () => undefined;
  let fail: (err: unknown) => void = () => undefined;
  const done = new Promise<number>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  const finish = (code: number) => {
    finished = true;
    settle(code);
  };

  const release = () => {
    signals.off('SIGINT', onSignal);
    signals.off('SIGTERM', onSignal);
    removeRunRecord(recordFile);
  };
  const stopEverything = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping');
    await Promise.all(running.map((each) => stopChild(each, stopTimeoutMs)));
    if (infra) await infra.stop();
    release();
    // The kill at once makes the drain end early too: the answer is still the interruption's.
    finish(forced ? INTERRUPTED : code);
  };
  // The second Ctrl-C: nobody waits for a drain any more.
  const killEverything = async () => {
    forced = true;
    say('stopping at once');
    const pids = [
      ...running.filter((each) => !each.ended).map((each) => each.child.pid),
      ...(infra?.processes() ?? []).map((each) => each.pid),
    ];
    await Promise.all(pids.filter((pid): pid is number => pid !== undefined).map((pid) => killTree(pid)));
    release();
    finish(INTERRUPTED);
  };
  function onSignal() {
    if (interrupted) return void killEverything();
    interrupted = true;
    // While the servers are still starting, the stop happens once they are up.
    if (infra) void stopEverything(0);
  }
  signals.on('SIGINT', onSignal);
  signals.on('SIGTERM', onSignal);

  const launch = async () => {
    infra = await options.startInfra();
    // Stopped at once while the servers were starting: these are not wanted any more.
    if (finished) return infra.stop();
    for (const server of infra.processes()) await record(`infra:${server.name}`, server.pid);
    if (interrupted) return stopEverything(0);
    const onEnd = (end: ChildEnd) => {
      if (stopping) return;
      say(`${describeEnd(end)}; stopping the others and the servers`);
      void stopEverything(exitCodeFor(end));
    };
    for (const service of options.services(infra)) {
      if (stopping) break;
      const each = startService(service, options, onEnd);
      running.push(each);
      await record(service.name, each.child.pid);
    }
    if (!stopping) options.onRunning?.();
  };
  // A start that fails half-way (a server that would not start) leaves nothing running.
  launch().catch(async (err: unknown) => {
    stopping = true;
    await Promise.all(running.map((each) => stopChild(each, stopTimeoutMs)));
    await (infra as I | null)?.stop().catch(() => undefined);
    release();
    fail(err);
  });
  return done;
}

/** Starts one service; `onEnd` hears of its end exactly once, however it ended. */
function startService(
  service: DevService,
  options: Pick<DevRunOptions<DevInfra>, 'cwd' | 'nodeArgs' | 'say'>,
  onEnd: (end: ChildEnd) => void,
): Running {
  // stdout goes straight to ours: every log line is JSON naming its `service`, and copying each
  // line through this process cost CPU on every request. stderr (a crash) is prefixed.
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), service.script], {
    cwd: options.cwd,
    env: service.env,
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  const prefix = `[${service.name}] `.padEnd(15);
  let rest = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines) if (line) process.stderr.write(prefix + line + '\n');
  });
  let resolveExited: () => void = () => undefined;
  const each: Running = { name: service.name, child, ended: false, exited: new Promise((resolve) => (resolveExited = resolve)) };
  // Settles on the end itself, whether the child exited with a code or was killed by a signal
  // (then exitCode stays null and the event has passed: waiting on `exitCode` hung after a SIGKILL).
  const end = (code: number | null, signal: NodeJS.Signals | null) => {
    if (each.ended) return;
    each.ended = true;
    resolveExited();
    onEnd({ name: service.name, code, signal });
  };
  child.once('exit', end);
  // A process that could not be spawned at all emits `error` and maybe no `exit`.
  child.once('error', (err) => {
    options.say(`${service.name} could not be started: ${err.message}`);
    end(1, null);
  });
  return each;
}

async function stopChild(each: Running, timeoutMs: number): Promise<void> {
  if (each.ended) return;
  each.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
  const outcome = await Promise.race([each.exited, late]);
  clearTimeout(timer);
  if (outcome === 'late' && each.child.pid !== undefined) {
    await killTree(each.child.pid);
    await each.exited;
  }
}
