import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
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
 * start, checked by binding it; the kernel's own choice (port 0) when none is found.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralRangeStart();
  for (let attempt = 0; low > 10_100 && attempt < 20; attempt += 1) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    if (await canBind(port)) return port;
  }
  return kernelPort();
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
