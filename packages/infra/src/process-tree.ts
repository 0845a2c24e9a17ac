import { execFile } from 'node:child_process';
import { sleep } from './process';

/** `ps` with a fixed locale and time zone, so the same process reads the same in every run. */
function ps(args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('ps', args, { env: { ...process.env, LC_ALL: 'C', TZ: 'UTC' }, timeout: 5_000 }, (err, stdout) =>
      resolve(err ? null : stdout),
    );
  });
}

/**
 * What tells a process apart from a later one that got the same pid: its start time and its
 * command line, as `ps` shows them. Null when there is no such process (or `ps` is missing, and
 * then nothing can be told apart: callers must not touch the pid).
 */
export async function identifyProcess(pid: number): Promise<string | null> {
  const line = (await ps(['-ww', '-o', 'lstart=,args=', '-p', String(pid)]))?.trim();
  // A child that died but is not reaped yet shows as <defunct>: it is gone for our purposes.
  return line && !line.endsWith('<defunct>') ? line : null;
}

/** Every process below `pid` (a server's script and the VM it started, say). */
export async function findDescendants(pid: number): Promise<number[]> {
  const table = await ps(['-A', '-o', 'pid=,ppid=']);
  if (!table) return [];
  const children = new Map<number, number[]>();
  for (const line of table.split('\n')) {
    const [child, parent] = line.trim().split(/\s+/).map(Number);
    if (!child || parent === undefined) continue;
    children.set(parent, [...(children.get(parent) ?? []), child]);
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Processes whose command line mentions `text` (who holds a data file), but this one. */
export async function findProcessesMentioning(text: string): Promise<Array<{ pid: number; args: string }>> {
  const table = await ps(['-ww', '-A', '-o', 'pid=,args=']);
  if (!table) return [];
  return table
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null && match[2]!.includes(text))
    .map((match) => ({ pid: Number(match[1]), args: match[2]! }))
    .filter(({ pid, args }) => pid !== process.pid && !args.startsWith('ps '));
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone: nothing left to stop.
  }
}

/**
 * SIGKILLs a process and everything below it, and waits (at most 5 s) until they are gone: a
 * server started through a script (RabbitMQ's `rabbitmq-server` runs the Erlang VM as its
 * child) would otherwise leave the VM running.
 */
export async function killTree(pid: number): Promise<void> {
  const pids = [pid, ...(await findDescendants(pid))];
  const identities = await Promise.all(pids.map((each) => identifyProcess(each)));
  for (const each of pids) signal(each, 'SIGKILL');
  await Promise.all(pids.map((each, index) => (identities[index] ? waitUntilGone(each, identities[index], 5_000) : true)));
}

/** Waits until the process that `identity` named is gone; false if it is still there at the deadline. */
export async function waitUntilGone(pid: number, identity: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await identifyProcess(pid)) !== identity) return true;
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
}

/**
 * Stops the process `identity` names: SIGTERM, then SIGKILL to it and its descendants when it
 * has not gone within `graceMs`. A pid that now names another process is never signalled.
 */
export async function stopIdentifiedProcess(pid: number, identity: string, graceMs: number): Promise<boolean> {
  if ((await identifyProcess(pid)) !== identity) return true;
  signal(pid, 'SIGTERM');
  if (await waitUntilGone(pid, identity, graceMs)) return true;
  if ((await identifyProcess(pid)) !== identity) return true;
  await killTree(pid);
  return (await identifyProcess(pid)) !== identity;
}
