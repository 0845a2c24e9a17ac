import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { identifyProcess, stopIdentifiedProcess } from './process-tree';
import type { Say } from './process';

/** A process `npm start` started, as it was when started (identity: see `identifyProcess`). */
export interface RecordedProcess {
  name: string;
  pid: number;
  identity: string;
}

/** The pid file of one `npm start`: the runner itself and every process it started. */
export interface RunRecord {
  runner: RecordedProcess;
  processes: RecordedProcess[];
}

/** `npm start` will not start: the message says why and what to do (no stack trace to show). */
export class StartRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartRefused';
  }
}

export function readRunRecord(file: string): RunRecord | null {
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as RunRecord;
    return record && record.runner && Array.isArray(record.processes) ? record : null;
  } catch {
    return null;
  }
}

/** Written whole under another name and renamed, so a crash never leaves half a record. */
export function writeRunRecord(file: string, record: RunRecord): void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(record, null, 2));
  renameSync(temporary, file);
}

export function removeRunRecord(file: string): void {
  rmSync(file, { force: true });
}

/** The process as it is now, for the record; null when it has already gone. */
export async function recordProcess(name: string, pid: number): Promise<RecordedProcess | null> {
  const identity = await identifyProcess(pid);
  return identity ? { name, pid, identity } : null;
}

/**
 * Before a start: stops what an earlier `npm start` left running (its runner was killed, so its
 * services and servers outlived it and would hold the ports and the data file). A process is
 * stopped only when its pid still names the process recorded (start time and command line):
 * one that merely reused the pid is never touched. Refuses while the earlier runner itself is
 * alive, and when something recorded cannot be stopped.
 */
export async function recoverLeftovers(file: string, say: Say, graceMs = 20_000): Promise<void> {
  const record = readRunRecord(file);
  if (!record) return removeRunRecord(file);
  const { runner } = record;
  if ((await identifyProcess(runner.pid)) === runner.identity) {
    throw new StartRefused(
      `npm start is already running as process ${runner.pid} (${file}). Stop it first: Ctrl-C in its terminal, ` +
        `or \`kill ${runner.pid}\` (it then stops its services and servers); if it does not end, \`kill -9 ${runner.pid}\` ` +
        `and start again: the next start stops what it left behind.`,
    );
  }
  const alive: RecordedProcess[] = [];
  for (const each of record.processes) if ((await identifyProcess(each.pid)) === each.identity) alive.push(each);
  if (alive.length > 0) {
    say(`an earlier npm start (process ${runner.pid}) ended without stopping: stopping ${describeAll(alive)}`);
  }
  // Services first (recorded last), then the servers they use, all at once within each group.
  const services = alive.filter(({ name }) => !name.startsWith('infra:'));
  const servers = alive.filter(({ name }) => name.startsWith('infra:'));
  const stuck: RecordedProcess[] = [];
  for (const group of [services, servers]) {
    const stopped = await Promise.all(group.map((each) => stopIdentifiedProcess(each.pid, each.identity, graceMs)));
    stuck.push(...group.filter((_, index) => !stopped[index]));
  }
  if (stuck.length > 0) {
    throw new StartRefused(
      `an earlier npm start left ${describeAll(stuck)} running and they could not be stopped: ` +
        `\`kill -9 ${stuck.map(({ pid }) => pid).join(' ')}\`, then start again.`,
    );
  }
  removeRunRecord(file);
}

function describeAll(processes: RecordedProcess[]): string {
  return processes.map(({ name, pid }) => `${name} (pid ${pid})`).join(', ');
}
