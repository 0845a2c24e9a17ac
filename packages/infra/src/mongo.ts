import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort, isRoot, run, startProcess, stopProcess, waitForPort, which, type OwnProcess, type Say } from './process';
import { findProcessesMentioning } from './process-tree';

export interface LocalServer {
  url: string;
  description: string;
  stop: () => Promise<void>;
  /** The local process it runs as (none for a container). */
  processes?: () => OwnProcess[];
}

/**
 * Where a local server keeps its data: `memory` (tests: gone when it stops) or a file that
 * survives a restart (`npm start`: `.dev/data/`).
 */
export type MongoStorage = { kind: 'memory' } | { kind: 'file'; path: string };

/** The workspace root: the folder holding pnpm-workspace.yaml above this package. */
export function workspaceRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'pnpm-workspace.yaml'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no pnpm-workspace.yaml above ${__dirname}`);
    dir = parent;
  }
  return dir;
}

const JAVA_SOURCES = join(__dirname, '..', 'java');
const LAUNCHER = 'MongoServerLauncher';

async function startMongod(path: string, storage: MongoStorage, port: number): Promise<LocalServer> {
  const temporary = storage.kind === 'memory';
  const dir = temporary ? mkdtempSync(join(tmpdir(), 'mongod-')) : join(dirname(storage.path), 'mongod');
  mkdirSync(dir, { recursive: true });
  const { child, output } = startProcess(path, ['--dbpath', dir, '--port', String(port), '--bind_ip', '127.0.0.1', '--quiet']);
  try {
    await waitForPort(port, 30_000, child);
  } catch (err) {
    await stopProcess(child);
    throw new Error(`mongod did not start: ${(err as Error).message}\n${output()}`);
  }
  return {
    url: `mongodb://127.0.0.1:${port}/`,
    description: `mongod (${path}) on 127.0.0.1:${port}, data in ${dir}`,
    processes: () => (child.pid === undefined ? [] : [{ name: 'mongod', pid: child.pid }]),
    stop: async () => {
      await stopProcess(child);
      if (temporary) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Java 17 (with javac) and Maven: found, or installed from Debian's packages when root. */
async function ensureJavaTools(say: Say): Promise<{ java: string; javac: string; mvn: string } | null> {
  const find = () => ({ java: which('java'), javac: which('javac'), mvn: which('mvn') });
  let tools = find();
  if ((!tools.java || !tools.javac || !tools.mvn) && isRoot() && which('apt-get')) {
    const missing = [!tools.javac && 'openjdk-17-jdk-headless', !tools.mvn && 'maven'].filter(Boolean) as string[];
    say(`installing ${missing.join(' and ')} with apt-get`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    await run('apt-get', ['update', '-qq'], { env });
    await run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env });
    tools = find();
  }
  return tools.java && tools.javac && tools.mvn ? { java: tools.java, javac: tools.javac, mvn: tools.mvn } : null;
}

/**
 * The launcher compiled against the jars its pom names, cached under `.tools/` by the hash of
 * the pom and the source: Maven fetches the jars into `.tools/m2` once, javac compiles once.
 * Returns the java command line that starts it, without the port and storage arguments.
 */
async function buildLauncher(tools: { java: string; javac: string; mvn: string }, say: Say): Promise<string[]> {
  const pom = join(JAVA_SOURCES, 'pom.xml');
  const source = join(JAVA_SOURCES, `${LAUNCHER}.java`);
  const hash = createHash('sha256').update(readFileSync(pom)).update(readFileSync(source)).digest('hex').slice(0, 12);
  const tools_ = join(workspaceRoot(), '.tools');
  const dir = join(tools_, 'mongo-java-server', hash);
  const classpathFile = join(dir, 'classpath.txt');
  // The class path is absolute: a checkout (or its .tools) that moved makes it again.
  const usable = () =>
    existsSync(classpathFile) &&
    readFileSync(classpathFile, 'utf8')
      .trim()
      .split(':')
      .every((entry) => existsSync(entry));
  if (!usable()) {
    say('fetching mongo-java-server with Maven and compiling its launcher (once)');
    const work = `${dir}.tmp-${process.pid}`;
    rmSync(work, { recursive: true, force: true });
    mkdirSync(join(work, 'classes'), { recursive: true });
    const jars = join(work, 'jars.txt');
    await run(tools.mvn, [
      '-q',
      '-B',
      '-f',
      pom,
      `-Dmaven.repo.local=${join(tools_, 'm2')}`,
      'dependency:build-classpath',
      `-Dmdep.outputFile=${jars}`,
    ]);
    const classpath = readFileSync(jars, 'utf8').trim();
    await run(tools.javac, ['-d', join(work, 'classes'), '-cp', classpath, source]);
    writeFileSync(join(work, 'classpath.txt'), `${join(dir, 'classes')}:${classpath}`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(work, dir);
  }
  return [tools.java, '-XX:+UseSerialGC', '-Xss512k', '-cp', readFileSync(classpathFile, 'utf8').trim(), LAUNCHER];
}

/** The heap's bound (`MONGO_JAVA_MAX_HEAP`, on disk 192m by default), checked; none in memory by default. */
function heapBound(storage: MongoStorage, env: NodeJS.ProcessEnv): string | undefined {
  const max = env.MONGO_JAVA_MAX_HEAP ?? (storage.kind === 'file' ? '192m' : undefined);
  if (max !== undefined && !/^\d+[kmg]$/i.test(max)) throw new Error(`MONGO_JAVA_MAX_HEAP must be a size such as 192m or 1g, not ${max}`);
  return max;
}

/**
 * The JVM's heap: without a bound it grows to a quarter of the machine's memory and its serial
 * collector rarely gives any back. On disk (H2, `npm start`) the data lives in the file and the heap
 * holds the cache and the requests in flight: bounded by `MONGO_JAVA_MAX_HEAP` (default 192m; the
 * write benches commit ≈ 50 MB of it). In memory (the tests) the heap is the data itself: unbounded
 * unless `MONGO_JAVA_MAX_HEAP` says. Both return free heap to the system after a collection (at
 * most 30 % of the heap kept free).
 */
export function javaHeapFlags(storage: MongoStorage, env: NodeJS.ProcessEnv = process.env): string[] {
  const max = heapBound(storage, env);
  return [...(max ? [`-Xmx${max}`] : []), '-XX:MinHeapFreeRatio=10', '-XX:MaxHeapFreeRatio=30'];
}

/**
 * The file-backed server's JVM beyond its heap's bound (`npm start`):
 * - `-Xms16m`: the initial heap is otherwise 1/64 of the machine's memory, and the serial
 *   collector sizes the young generation from it (≈ 130 MB of eden on 24 GB, all of it touched
 *   before the first collection); from 16 MB the heap grows as the load needs;
 * - `-XX:TieredStopAtLevel=1`: the client compiler only. C2's compilations peak at ≈ 47 MB of
 *   arena and its code and threads stay resident: without it the JVM holds ≈ 60 MB less, and a
 *   development run, shorter than C2's pay-back, spent less CPU per operation, not more
 *   (bench/README.md, "Memory of the stack after the load");
 * - `-XX:MaxNewSize=8m`: the serial collector gives the young generation a third of the heap it
 *   has grown to (≈ 20 MB after the write bench, every page of it touched); at 8 MB the JVM holds
 *   ≈ 15–20 MB less after a full load for more, cheaper young collections (1.5–1.7 times as many);
 *   alone, its CPU per operation within the runs' spread; with every change of that step
 *   together, 4–7 % higher in four interleaved pairs, where the load generator's own rose 6 %
 *   (bench/README.md, "Step 6").
 * The collector (serial) and the thread stacks (512 KB) are the launcher's own flags; the code
 * cache (≈ 15 MB used), the metaspace (≈ 10 MB) and the stacks (≈ 2 MB) are small already, so
 * they are not bounded further. The tests' in-memory server keeps the JVM's defaults.
 * The initial heap is never above the bound (`MONGO_JAVA_MAX_HEAP=8m` starts at 8m): the JVM
 * refuses to start with `-Xms` above `-Xmx` (`leanJavaFlags`). Under a bound of 24m the young
 * generation's own third of the heap is already under 8 MB, and the cap would set 8 MB aside for
 * it, leaving the old generation less than the two thirds it gets otherwise: the cap is left out
 * there. The bound is read from `MONGO_JAVA_MAX_HEAP`: give it there, not as `-Xmx` in
 * `MONGO_JAVA_OPTS`, which this does not read.
 */
export const LEAN_JAVA_FLAGS: readonly string[] = ['-Xms16m', '-XX:TieredStopAtLevel=1', '-XX:MaxNewSize=8m'];

/** Bytes of a JVM size such as 192m (k, m, g). */
function sizeInBytes(size: string): number {
  const unit = { k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[size.slice(-1).toLowerCase() as 'k' | 'm' | 'g'];
  return Number(size.slice(0, -1)) * unit;
}

/**
 * `LEAN_JAVA_FLAGS` with the initial heap at most the heap's bound `max` (a JVM size, or none),
 * and the young generation's cap only where the bound is 24m or more (none: the JVM's own).
 */
export function leanJavaFlags(max: string | undefined): string[] {
  const initial = '16m';
  const young = '8m';
  const below = (size: string) => max !== undefined && sizeInBytes(max) < sizeInBytes(size);
  const capped = below(initial) ? max! : initial;
  return LEAN_JAVA_FLAGS.filter((flag) => !(flag === `-XX:MaxNewSize=${young}` && below('24m'))).map((flag) =>
    flag === `-Xms${initial}` ? `-Xms${capped}` : flag,
  );
}

/**
 * Every flag of the server's JVM before the launcher's class path: the heap's (`javaHeapFlags`),
 * `LEAN_JAVA_FLAGS` on disk (`leanJavaFlags`: the initial heap within the bound), then `MONGO_JAVA_OPTS` (space-separated, for either storage; a later
 * flag wins, e.g. `-XX:TieredStopAtLevel=4` gives C2 back).
 */
export function javaFlags(storage: MongoStorage, env: NodeJS.ProcessEnv = process.env): string[] {
  const extra = (env.MONGO_JAVA_OPTS ?? '').split(' ').filter(Boolean);
  return [...javaHeapFlags(storage, env), ...(storage.kind === 'file' ? leanJavaFlags(heapBound(storage, env)) : []), ...extra];
}

async function startMongoJavaServer(command: string[], storage: MongoStorage, port: number): Promise<LocalServer> {
  const args = storage.kind === 'memory' ? [String(port), 'memory'] : [String(port), 'h2', storage.path];
  // The launcher's own flags (the collector, the thread stacks) first, then ours, then its class path.
  const classPath = command.indexOf('-cp');
  const flags = [...command.slice(1, classPath), ...javaFlags(storage)];
  const { child, output } = startProcess(command[0]!, [...flags, ...command.slice(classPath), ...args]);
  try {
    await waitForPort(port, 60_000, child);
  } catch (err) {
    await stopProcess(child);
    if (storage.kind === 'file' && /The file is locked/.test(output())) throw new Error(await describeLockedFile(storage.path));
    throw new Error(`mongo-java-server did not start: ${(err as Error).message}\n${output()}`);
  }
  const where = storage.kind === 'memory' ? 'in memory' : `data in ${storage.path}`;
  return {
    url: `mongodb://127.0.0.1:${port}/`,
    description: `mongo-java-server (embedded development server) on 127.0.0.1:${port}, ${where}`,
    processes: () => (child.pid === undefined ? [] : [{ name: 'mongo-java-server', pid: child.pid }]),
    stop: () => stopProcess(child),
  };
}

/**
 * H2 locks its file while a server has it open: the usual holder is a server an earlier
 * `npm start` left running when it was killed. Says which process that is and how to stop it,
 * instead of Java's stack trace.
 */
async function describeLockedFile(path: string): Promise<string> {
  const holders = await findProcessesMentioning(path);
  const lines = [`mongo-java-server cannot open ${path}: another process has it open.`];
  if (holders.length === 0) {
    lines.push(`Find it with \`ps -ef | grep ${path}\` and stop it, or move the file away to start with empty databases.`);
    return lines.join('\n');
  }
  for (const { pid, args } of holders) lines.push(`  process ${pid}: ${args.length > 160 ? `${args.slice(0, 160)}…` : args}`);
  const pids = holders.map(({ pid }) => pid).join(' ');
  lines.push(
    `Most likely a server left running by an earlier \`npm start\` that was killed. Stop it with \`kill ${pids}\` ` +
      `(\`kill -9 ${pids}\` if it is still there after a few seconds) and start again.`,
  );
  return lines.join('\n');
}

/**
 * The mongo-java-server launcher, compiled and cached as `startLocalMongo` uses it: its class
 * folder and the jars it runs with (Java 17 and Maven found, or installed when root). For the
 * compose stand-in image of `scripts/containers.mjs`, which runs this same launcher. Null when
 * Java and Maven cannot be had.
 */
export async function mongoJavaServerLauncher(say: Say): Promise<{ mainClass: string; classes: string; jars: string[] } | null> {
  const tools = await ensureJavaTools(say);
  if (!tools) return null;
  const command = await buildLauncher(tools, say);
  const [classes, ...jars] = command[command.indexOf('-cp') + 1]!.split(':');
  return { mainClass: LAUNCHER, classes: classes!, jars };
}

/**
 * A local MongoDB-compatible server: `mongod` on PATH, else mongo-java-server run by the
 * launcher in `packages/infra/java` (Java 17 and Maven found, or installed when root).
 * Null when neither can be had. `port` (default: a free one) lets a test restart a file-backed
 * server at the address its clients already use.
 */
export async function startLocalMongo(storage: MongoStorage, say: Say, port?: number): Promise<LocalServer | null> {
  const mongod = which('mongod');
  if (mongod) return startMongod(mongod, storage, port ?? (await freePort()));
  const tools = await ensureJavaTools(say);
  if (!tools) return null;
  return startMongoJavaServer(await buildLauncher(tools, say), storage, port ?? (await freePort()));
}
