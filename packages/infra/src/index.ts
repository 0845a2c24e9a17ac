import amqp from 'amqplib';
import { dockerAnswers, MONGO_IMAGE, RABBIT_IMAGE, startMongoContainer, startRabbitContainer } from './docker';
import { startLocalMongo, type LocalServer, type MongoStorage } from './mongo';
import { ensureRabbitBinary, rabbitAlreadyRunning, startLocalRabbit, waitForAmqp, type BrokerHandle, type BrokerTlsFiles } from './rabbit';
import { isPortOpen, type OwnProcess, type Say } from './process';
import { provisionBusUsers, type BusUsers } from './bus-users';

export type { BrokerHandle, BrokerTlsFiles, LocalServer, MongoStorage, OwnProcess, Say };
export { workspaceRoot } from './mongo';

export interface Infra {
  mongoUrl: string;
  amqpUrl: string;
  /** What was used, one line each, for the log. */
  used: string[];
  stop: () => Promise<void>;
  /** The local processes of the servers it started (for `npm start`'s pid file). */
  processes: () => OwnProcess[];
  /**
   * A broker user per service (random names and passwords of this run), when it started the
   * broker itself; absent on a broker it was given or found running (every service then
   * connects with `amqpUrl`).
   */
  busUsers?: BusUsers;
}

export interface InfraOptions {
  say?: Say;
  env?: NodeJS.ProcessEnv;
  /** Where a locally started MongoDB-compatible server keeps its data (default: in memory). */
  mongoStorage?: MongoStorage;
}

async function urlReachable(url: string | undefined, defaultPort: number): Promise<boolean> {
  if (!url) return false;
  try {
    const parsed = new URL(url.replace(/^mongodb\+srv:/, 'mongodb:'));
    const host = parsed.hostname.split(',')[0] || '127.0.0.1';
    return await isPortOpen(Number(parsed.port || defaultPort), host, 2_000);
  } catch {
    return false;
  }
}

const MISSING_HELP = [
  'No MongoDB-compatible server or RabbitMQ could be found or started. Any one of these works:',
  '  - set MONGO_URL and AMQP_URL to running servers;',
  `  - run a Docker engine (the tests then start ${MONGO_IMAGE} and ${RABBIT_IMAGE});`,
  '  - install mongod, or Java 17 with javac and Maven (Debian/Ubuntu: apt-get install',
  '    openjdk-17-jdk-headless maven) for the embedded mongo-java-server, and rabbitmq-server',
  '    (apt-get install rabbitmq-server);',
  '  - run as root on Debian/Ubuntu, and this script installs them.',
].join('\n');

/**
 * Finds or starts MongoDB and RabbitMQ, in the order of ADR 0010: URLs from the environment
 * when reachable; a Docker engine (testcontainers); local servers (mongod, else the embedded
 * mongo-java-server; rabbitmq-server, or one already listening on 5672); as root, install
 * what they need; else stop with a message saying what to install. Says what it used.
 */
export async function provideInfra({
  say = () => undefined,
  env = process.env,
  mongoStorage = { kind: 'memory' },
}: InfraOptions = {}): Promise<Infra> {
  const started: Array<{ stop: () => Promise<void>; processes?: () => OwnProcess[] }> = [];
  const used: string[] = [];
  const stop = async () => {
    for (const server of started.reverse()) await server.stop().catch(() => undefined);
  };
  try {
    let busUsers: BusUsers | undefined;
    const withUsers = async (rabbit: BrokerHandle) => {
      if (rabbit.ctl) busUsers = await provisionBusUsers(rabbit.ctl, rabbit.url);
    };
    let mongoUrl = (await urlReachable(env.MONGO_URL, 27017)) ? env.MONGO_URL! : null;
    let amqpUrl = (await urlReachable(env.AMQP_URL, 5672)) ? env.AMQP_URL! : null;
    if (mongoUrl) used.push(`MongoDB from MONGO_URL`);
    if (amqpUrl) used.push(`RabbitMQ from AMQP_URL`);
    if ((!mongoUrl || !amqpUrl) && (await dockerAnswers())) {
      if (!mongoUrl) {
        const mongo = await startMongoContainer();
        started.push(mongo);
        mongoUrl = mongo.url;
        used.push(mongo.description);
      }
      if (!amqpUrl) {
        const rabbit = await startRabbitContainer();
        started.push(rabbit);
        amqpUrl = rabbit.url;
        await withUsers(rabbit);
        used.push(rabbit.description);
      }
    }
    if (!mongoUrl) {
      const mongo = await startLocalMongo(mongoStorage, say);
      if (!mongo) throw new Error(MISSING_HELP);
      started.push(mongo);
      mongoUrl = mongo.url;
      used.push(mongo.description);
    }
    if (!amqpUrl) {
      const running = await rabbitAlreadyRunning();
      if (running) {
        amqpUrl = running;
        used.push('RabbitMQ already running on 127.0.0.1:5672');
      } else {
        const binary = await ensureRabbitBinary(say);
        if (!binary) throw new Error(MISSING_HELP);
        const rabbit = await startLocalRabbit(binary);
        started.push(rabbit);
        amqpUrl = rabbit.url;
        await withUsers(rabbit);
        used.push(rabbit.description);
      }
    }
    used.push(
      busUsers
        ? `RabbitMQ users of this run, one per service, each publishing only its own events (${busUsers.publisherUsers})`
        : 'RabbitMQ: one user for every service (a broker not started here cannot be given users of a run)',
    );
    for (const line of used) say(`infra: ${line}`);
    const processes = () => started.flatMap((server) => server.processes?.() ?? []);
    return { mongoUrl, amqpUrl, used, stop, processes, ...(busUsers ? { busUsers } : {}) };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * A broker of its own for a test that stops and starts it (the shared one must stay up for the
 * other tests running beside it): a container with Docker, else a local rabbitmq-server node.
 */
export async function startDisposableBroker(say: Say = () => undefined): Promise<BrokerHandle> {
  if (await dockerAnswers()) return startRabbitContainer();
  const binary = await ensureRabbitBinary(say);
  if (!binary) throw new Error(MISSING_HELP);
  return startLocalRabbit(binary);
}

/**
 * A database server of its own for a test that stops, restarts or outlives it (the shared one
 * must stay up for the tests beside it); `port` lets a file-backed one restart at its address.
 */
export async function startDisposableMongo(storage: MongoStorage, port?: number): Promise<LocalServer> {
  const server = await startLocalMongo(storage, () => undefined, port);
  if (!server) throw new Error(MISSING_HELP);
  return server;
}

/**
 * A local RabbitMQ node with a TLS listener too (`tlsUrl`, the certificate and key of `tls`), for a
 * test of TLS connections; a local `rabbitmq-server` is needed (a container is not started here).
 */
export async function startTlsBroker(tls: BrokerTlsFiles, say: Say = () => undefined): Promise<BrokerHandle> {
  const binary = await ensureRabbitBinary(say);
  if (!binary) throw new Error(MISSING_HELP);
  return startLocalRabbit(binary, { tls });
}

export { waitForAmqp, startLocalMongo };
export { makeTestCertificates, type TestCertificates } from './tls';
export { mongoJavaServerLauncher } from './mongo';

/** An AMQP connection of a test's own, to look at queues itself (audit queues, dead letters). */
export function connectAmqp(url: string) {
  return amqp.connect(url);
}
export * from './testing';
export * from './bus-users';
export * from './harness';
export { freePort, stopProcess } from './process';
export * from './dev-runner';
export { StartRefused, readRunRecord, recoverLeftovers, type RecordedProcess, type RunRecord } from './run-record';
export { identifyProcess } from './process-tree';
export * from './service-basics';
export * from './tools';
export * from './wire-counter';
export { importCycles } from './import-cycles';
export { untypedSeams } from './typed-seam';
export { serviceLayout } from './service-layout';
export { contractsOutsideArea, type ContractsArea } from './contracts-areas';
