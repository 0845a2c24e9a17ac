import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import amqp from 'amqplib';
import { freePort, isRoot, run, sleep, startProcess, stopProcess, waitForPort, which, type OwnProcess, type Say } from './process';

export interface BrokerHandle {
  url: string;
  description: string;
  /** Stops the broker (its data stays, so durable queues survive a start). */
  stopBroker: () => Promise<void>;
  startBroker: () => Promise<void>;
  /** Stops it for good and removes its data. */
  stop: () => Promise<void>;
  /** The local process it runs as while it runs (none for a container). */
  processes?: () => OwnProcess[];
  /** `rabbitmqctl` against this broker (`input`: its standard input), to create its users. */
  ctl?: (args: string[], input?: string) => Promise<string>;
  /** With a TLS listener (`startLocalRabbit`'s `tls`): its `amqps://` URL, beside the plain `url`. */
  tlsUrl?: string;
}

/** The PEM files of a broker's TLS listener (`makeTestCertificates`). */
export interface BrokerTlsFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
}

/**
 * The Debian wrapper /usr/sbin/rabbitmq-server switches to the rabbitmq user, which cannot
 * write our temporary folders; as root, the server script underneath is run directly.
 */
export function findRabbitBinary(): string | null {
  const underneath = '/usr/lib/rabbitmq/bin/rabbitmq-server';
  return existsSync(underneath) ? underneath : which('rabbitmq-server');
}

export async function installRabbit(say: Say): Promise<void> {
  say('installing rabbitmq-server with apt-get');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await run('apt-get', ['update', '-qq'], { env });
  await run('apt-get', ['install', '-y', '-qq', 'rabbitmq-server'], { env });
}

/**
 * The Erlang VM flags of a small development node (`npm start` sets them through
 * `RABBITMQ_ERL_MEMORY_ARGS`): `+Mea min` leaves the VM's own memory allocators (carriers kept per
 * scheduler and per kind) for plain malloc, ≈ 40 MB less resident on a node that carries a few
 * hundred messages a second. `+P 65536`: the server script asks for a table of 1,048,576
 * processes, which the VM allocates and fills at boot (≈ 11–15 MB resident, whatever the node runs);
 * a development node runs a handful of processes per connection, channel and quorum queue (the
 * stack has tens of each), so 65,536 leaves it ample room: ≈ 11 MB less resident, no work per
 * message (it comes after the script's own `+P`: the later flag wins; bench/README.md, "Step 7").
 * One scheduler (`+S 1:1`) saved little and halved the node's throughput, so the schedulers stay as
 * the VM picks them; the server script already keeps idle schedulers from spinning (`+sbwt none`).
 */
export const LEAN_RABBIT_ERL_ARGS = '+Mea min +P 65536';

/**
 * The Erlang VM flags of a node of our own: its distribution port on the loopback interface, then
 * `RABBITMQ_ERL_MEMORY_ARGS` (unset for the tests' nodes: the VM's own allocators), then the
 * caller's `RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS` (a later flag wins).
 */
export function rabbitErlangArgs(env: NodeJS.ProcessEnv = process.env): string {
  return ['-kernel inet_dist_use_interface {127,0,0,1}', env.RABBITMQ_ERL_MEMORY_ARGS, env.RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS]
    .filter(Boolean)
    .join(' ');
}

/** Waits until an AMQP handshake succeeds (the port opens a moment before the broker is ready). */
export async function waitForAmqp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  while (Date.now() < deadline) {
    try {
      const connection = await amqp.connect(url, { timeout: 2_000 });
      await connection.close();
      return;
    } catch (err) {
      lastError = (err as Error).message;
      await sleep(250);
    }
  }
  throw new Error(`RabbitMQ at ${url} did not accept connections within ${timeoutMs} ms: ${lastError}`);
}

/**
 * Starts a RabbitMQ node of its own (own name, ports and data folder). With `tls`, it also listens
 * for TLS on a port of its own (127.0.0.1, the certificate and key given; clients are not asked for
 * one): `tlsUrl`. The plain listener stays, for the readiness check and `rabbitmqctl`.
 */
export async function startLocalRabbit(binary: string, options: { tls?: BrokerTlsFiles } = {}): Promise<BrokerHandle> {
  const port = await freePort();
  const distPort = await freePort();
  const tlsPort = options.tls ? await freePort() : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'rabbitmq-'));
  mkdirSync(join(dir, 'mnesia'));
  mkdirSync(join(dir, 'log'));
  if (options.tls)
    writeFileSync(
      join(dir, 'rabbitmq.conf'),
      [
        `listeners.ssl.local = 127.0.0.1:${tlsPort}`,
        `ssl_options.cacertfile = ${options.tls.caFile}`,
        `ssl_options.certfile = ${options.tls.certFile}`,
        `ssl_options.keyfile = ${options.tls.keyFile}`,
        'ssl_options.verify = verify_none',
        'ssl_options.fail_if_no_peer_cert = false',
        '',
      ].join('\n'),
    );
  const nodeName = `mkt_${process.pid}_${port}@localhost`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: dir,
    RABBITMQ_NODENAME: nodeName,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    // The Erlang distribution port (and an epmd this node starts) on the loopback interface too,
    // as the AMQP port: a node's distribution port is a remote shell for whoever has its cookie.
    ERL_EPMD_ADDRESS: '127.0.0.1',
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: rabbitErlangArgs(process.env),
    RABBITMQ_CTL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_LOGS: '-',
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_CONFIG_FILE: join(dir, options.tls ? 'rabbitmq.conf' : 'rabbitmq'),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, 'advanced.config'),
  };
  const url = `amqp://guest:guest@127.0.0.1:${port}`;
  let current: ReturnType<typeof startProcess> | null = null;
  const startBroker = async () => {
    current = startProcess(binary, [], env);
    try {
      await waitForPort(port, 60_000, current.child);
      await waitForAmqp(url, 30_000);
      if (tlsPort !== undefined) await waitForPort(tlsPort, 30_000, current.child);
    } catch (err) {
      const output = current.output();
      await stopProcess(current.child);
      throw new Error(`RabbitMQ did not start: ${(err as Error).message}\n${output}`);
    }
  };
  const stopBroker = async () => {
    if (current) await stopProcess(current.child, 30_000);
    current = null;
  };
  await startBroker();
  return {
    url,
    tlsUrl: tlsPort === undefined ? undefined : `amqps://guest:guest@127.0.0.1:${tlsPort}`,
    description: `rabbitmq-server (${binary}) node ${nodeName} on 127.0.0.1:${port}${tlsPort === undefined ? '' : ` (TLS: ${tlsPort})`}`,
    processes: () => {
      const pid = current?.child.pid;
      return pid === undefined ? [] : [{ name: 'rabbitmq-server', pid }];
    },
    ctl: (args, input) => run(join(dirname(binary), 'rabbitmqctl'), ['-n', nodeName, ...args], { env, input, timeoutMs: 120_000 }),
    startBroker,
    stopBroker,
    stop: async () => {
      await stopBroker();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function rabbitAlreadyRunning(): Promise<string | null> {
  const url = 'amqp://guest:guest@127.0.0.1:5672';
  try {
    await waitForAmqp(url, 1_000);
    return url;
  } catch {
    return null;
  }
}

export async function ensureRabbitBinary(say: Say): Promise<string | null> {
  const found = findRabbitBinary();
  if (found || !isRoot() || !which('apt-get')) return found;
  await installRabbit(say);
  return findRabbitBinary();
}
