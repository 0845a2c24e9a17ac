import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, Socket } from 'node:net';
import { delimiter, join } from 'node:path';

export type Say = (message: string) => void;

/** A process a server runs as, for the pid file of `npm start` (`name`: which server it is). */
export interface OwnProcess {
  name: string;
  pid: number;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs a command; resolves with its output, rejects with it on a non-zero exit. */
export function run(
  command: string,
  args: string[],
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args,
      { timeout: options.timeoutMs ?? 600_000, env: options.env ?? process.env, cwd: options.cwd, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${command} ${args.join(' ')} failed: ${err.message}\n${stderr}`.trim()));
        else resolve(stdout);
      },
    );
    // `input`: the command's standard input (what must not be in its arguments, which `ps` shows).
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

export function which(name: string, extraDirs: string[] = []): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), ...extraDirs];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

export function isPortOpen(port: number, host = '127.0.0.1', timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, host);
  });
}

export async function waitForPort(port: number, timeoutMs: number, child?: ChildProcess, host = '127.0.0.1'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`the process exited with code ${child.exitCode} before listening on ${port}`);
    if (await isPortOpen(port, host)) return;
    await sleep(200);
  }
  throw new Error(`nothing listened on ${host}:${port} within ${timeoutMs} ms`);
}

/**
 * A port nothing listens on, chosen below the kernel's ephemeral range (where outgoing
 * connections take their local ports): a port picked there and bound a moment later by a server
 * can meanwhile be taken by one of the machine's own client sockets (many processes starting at
 * once, as in the mixed-version run beside the images step). Random between 10000 and the range's
 * start, claimed for this process (below) and checked by binding it; the kernel's own choice
 * (port 0) when none is found.
 *
 * The claim: a port is handed out and bound seconds later (the images step picks six ports, then
 * migrates and starts six containers one after another), and another process picking in that
 * window sees it free. A CI run met it: the catalog container's port was taken by a step beside
 * it. So each pick is claimed by a file per port made with `wx` in `portClaimsDir()`, shared by
 * the processes of one user (and one `TMPDIR`), until the claiming process exits. A claim is never
 * taken over: a port already claimed is passed for another. The claims of processes gone without
 * their exit handler (killed, or jest's sandboxed `process`) and those older than `CLAIM_MS` (by
 * then the claimant's server listens, and the bind check refuses the port) are swept by the next
 * process's first pick. Where the directory cannot be used, a pick is the bind check alone.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralRangeStart();
  const dir = usableClaimsDir();
  for (let attempt = 0; low > 10_100 && attempt < 20; attempt += 1) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    const claim = dir === null ? 'unusable' : claimPort(dir, port);
    if (claim === 'taken') continue;
    if (await canBind(port)) return port;
    if (claim === 'claimed') releasePort(dir!, port);
  }
  return kernelPort();
}

/** Where picked ports are claimed: `MKT_PORT_CLAIMS_DIR`, or one directory per user in the temporary directory. */
export function portClaimsDir(): string {
  return process.env.MKT_PORT_CLAIMS_DIR || join(tmpdir(), `mkt-ports-${typeof process.getuid === 'function' ? process.getuid() : 'user'}`);
}
/** How long a claim holds, whatever its process: far longer than any pick takes to be bound. */
export const CLAIM_MS = 10 * 60_000;
/** The ports this process claimed, by directory. */
const claimed = new Map<string, Set<number>>();

/** The claims directory, made if missing; null where it cannot be made or is not this user's own directory. */
function usableClaimsDir(): string | null {
  const dir = portClaimsDir();
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const info = lstatSync(dir);
    if (!info.isDirectory() || (typeof process.getuid === 'function' && info.uid !== process.getuid())) return null;
  } catch {
    return null;
  }
  if (!claimed.has(dir)) {
    claimed.set(dir, new Set());
    if (claimed.size === 1) process.once('exit', releaseAll);
    sweepClaims(dir);
  }
  return dir;
}

/**
 * Claims `port` in `dir` for this process: `taken` when it is claimed already (by anyone),
 * `unusable` when the directory refuses the file (full, read-only): the pick is the bind check alone.
 */
export function claimPort(dir: string, port: number): 'claimed' | 'taken' | 'unusable' {
  const mine = claimed.get(dir) ?? claimed.set(dir, new Set()).get(dir)!;
  if (mine.has(port)) return 'taken';
  try {
    writeFileSync(join(dir, String(port)), `${process.pid}\n`, { flag: 'wx' });
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EEXIST' ? 'taken' : 'unusable';
  }
  mine.add(port);
  return 'claimed';
}

/**
 * Removes the claims of processes gone and those older than `CLAIM_MS`. A claim judged stale is
 * moved aside by one rename (atomic: only one sweeper gets it) and removed only if the file moved
 * is the one judged (same inode); a claim made again meanwhile under the same name is put back.
 */
export function sweepClaims(dir: string, now = Date.now()): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue; // another sweeper's file moved aside
    const file = join(dir, name);
    const aside = join(dir, `${name}.swept-${process.pid}`);
    try {
      const judged = statSync(file);
      if (!claimIsStale(file, judged.mtimeMs, now)) continue;
      renameSync(file, aside);
      if (statSync(aside).ino !== judged.ino) linkSync(aside, file);
      rmSync(aside, { force: true });
    } catch {
      // gone meanwhile (another sweeper took it), or the name is claimed again: the newer claim stays
      rmSync(aside, { force: true });
    }
  }
}

function claimIsStale(file: string, madeAt: number, now: number): boolean {
  if (now - madeAt > CLAIM_MS) return true;
  const pid = Number(readFileSync(file, 'utf8').trim());
  // No pid yet: the claim is being written (`wx` makes the file, then writes it).
  return Number.isInteger(pid) && pid > 0 && !processLives(pid);
}

function processLives(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}

/** Gives up this process's claim of `port` (only if the file is still its own). */
function releasePort(dir: string, port: number): void {
  if (!claimed.get(dir)?.delete(port)) return;
  const file = join(dir, String(port));
  try {
    if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file, { force: true });
  } catch {
    // gone already
  }
}

function releaseAll(): void {
  for (const [dir, ports] of claimed) for (const port of [...ports]) releasePort(dir, port);
}

function ephemeralRangeStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) && start > 0 ? start : 32_768;
  } catch {
    return 32_768; // not Linux: the common default
  }
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Starts a long-running server process; its output goes to `logFile` lines kept in memory. */
export function startProcess(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): { child: ChildProcess; output: () => string } {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { child, output: () => output };
}

export function stopProcess(child: ChildProcess, timeoutMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}
