import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
 * start, reserved for this process (below) and checked by binding it; the kernel's own choice
 * (port 0) when none is found.
 *
 * The reservation: a port is handed out and bound seconds later (the images step picks six ports,
 * then migrates and starts six containers one after another), and another process picking in
 * that window sees it free. A CI run met it: the mixed-version run beside the images step took
 * the catalog container's port first. So each pick is claimed machine-wide, one file per port
 * made with `wx` in `PORT_RESERVATIONS`, until the claiming process exits or `RESERVATION_MS`
 * passes (by then its server listens, and the bind check refuses the port).
 */
export async function freePort(): Promise<number> {
  const low = ephemeralRangeStart();
  for (let attempt = 0; low > 10_100 && attempt < 20; attempt += 1) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    if (!reservePort(port)) continue;
    if (await canBind(port)) return port;
    releasePort(port);
  }
  return kernelPort();
}

/** Where picked ports are claimed: shared by every process of this user on the machine. */
export const PORT_RESERVATIONS = join(tmpdir(), `mkt-ports-${typeof process.getuid === 'function' ? process.getuid() : 'user'}`);
/** How long a claim holds while its process lives. */
export const RESERVATION_MS = 10 * 60_000;
const reserved = new Set<number>();
let releaseOnExit = false;

/** Claims `port` for this process; false when a live process claimed it within `RESERVATION_MS`. */
export function reservePort(port: number, now = Date.now()): boolean {
  if (reserved.has(port)) return false;
  if (!releaseOnExit) sweepClaims(now);
  const file = join(PORT_RESERVATIONS, String(port));
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      if (!releaseOnExit) process.once('exit', releaseAll);
      releaseOnExit = true;
      reserved.add(port);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !claimIsStale(file, now)) return false;
      // A dead or old claim: removed once, then `wx` decides between processes doing the same.
      rmSync(file, { force: true });
    }
  }
  return false;
}

/** Once per process: the claims of processes gone without their exit handler (killed, or jest's sandboxed `process`). */
function sweepClaims(now: number): void {
  mkdirSync(PORT_RESERVATIONS, { recursive: true, mode: 0o700 });
  for (const name of readdirSync(PORT_RESERVATIONS)) {
    const file = join(PORT_RESERVATIONS, name);
    if (claimIsStale(file, now)) rmSync(file, { force: true });
  }
}

function claimIsStale(file: string, now: number): boolean {
  try {
    if (now - statSync(file).mtimeMs > RESERVATION_MS) return true;
    const pid = Number(readFileSync(file, 'utf8').trim());
    // No pid yet: the claim is being written (`wx` makes the file, then writes it).
    return Number.isInteger(pid) && pid > 0 && !processLives(pid);
  } catch {
    return false; // gone meanwhile: the next `wx` decides
  }
}

function processLives(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}

function releasePort(port: number): void {
  if (!reserved.delete(port)) return;
  rmSync(join(PORT_RESERVATIONS, String(port)), { force: true });
}

function releaseAll(): void {
  for (const port of [...reserved]) releasePort(port);
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
