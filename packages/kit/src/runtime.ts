import { createServer, type RequestListener, type Server } from 'node:http';
import { Bus } from './bus/bus';
import type { ConsumerSpec } from './bus/consumer';
import { ensureOutboxIndexes, OutboxRelay, type OutboxSource } from './bus/outbox';
import type { ReadinessCheck } from './http/create-service';
import type { Logger } from './logger';
import { connectMongo, disconnectMongo, ensureIndexes, isMongoReady, type AnyModel } from './mongo';
import { shutdownGraceMs } from './config';
import { beforeScrape, getMetrics } from './metrics';
import { exitProcess, handleShutdown } from './shutdown';
import { shutdownTracing } from './tracing';

export interface RuntimeConfig {
  PORT: number;
  /** Unset: every interface; `npm start` says 127.0.0.1. */
  HOST?: string;
  MONGO_URL: string;
  MONGO_DB?: string;
  AMQP_URL: string;
  BUS_NAMESPACE?: string;
  SHUTDOWN_TIMEOUT_MS: number;
  SHUTDOWN_GRACE_MS?: number;
  NODE_ENV?: string;
}

/** What a service's `createApp` gets from the composition root. */
export interface Runtime {
  log: Logger;
  bus: Bus;
  outbox: OutboxRelay;
  readiness: ReadinessCheck[];
}

/** Everything of a service above its (already connected) database. */
export interface RuntimeOptions {
  name: string;
  config: Pick<RuntimeConfig, 'PORT' | 'HOST' | 'AMQP_URL' | 'BUS_NAMESPACE'>;
  log: Logger;
  outboxSources?: OutboxSource[];
  consumers?: ConsumerSpec[];
  /** The HTTP handler: an express app (`createService`), or any request listener (the gateway's edge in front of one). */
  createApp: (runtime: Runtime) => RequestListener;
  /** Background jobs (sweepers); each returns its stop function. */
  jobs?: Array<(runtime: Runtime) => () => Promise<void>>;
  /** Wait this long for the broker before answering (tests); by default it connects in the background. */
  brokerTimeoutMs?: number;
  /**
   * false: `/readyz` does not depend on the database (only reported). The gateway: its own
   * routes fail alone when its database is away, and proxying goes on. Default true.
   */
  readinessNeedsDatabase?: boolean;
}

export interface RunOptions extends RuntimeOptions {
  config: RuntimeConfig;
  models: AnyModel[];
}

export interface StartedRuntime {
  server: Server;
  url: string;
  runtime: Runtime;
  /** Stops jobs, relay and broker, in that order (after the server has stopped accepting). */
  closers: Array<() => Promise<void>>;
  /** From now on `/readyz` answers 503 (SIGTERM; requests are still served). */
  startDraining: () => void;
}

/**
 * Broker, outbox relay, consumers, jobs and HTTP over a connected database. The broker
 * connects in the background: until it does, `/readyz` reports it (and stays 200: the relay
 * keeps events in the outbox, writes go on) — readiness is the process not draining and the
 * database. `runService` and the component tests both build a service through here.
 */
export async function startRuntime(options: RuntimeOptions): Promise<StartedRuntime> {
  const { config, log } = options;
  const bus = new Bus({ url: config.AMQP_URL, log, namespace: config.BUS_NAMESPACE });
  const outbox = new OutboxRelay({ bus, log, sources: options.outboxSources ?? [] });
  let draining = false;
  const readiness: ReadinessCheck[] = [
    { name: 'process', check: () => !draining, downAs: 'draining' },
    { name: 'mongo', check: isMongoReady, required: options.readinessNeedsDatabase ?? true },
    { name: 'broker', check: () => bus.isConnected(), required: false },
  ];
  const runtime: Runtime = { log, bus, outbox, readiness };
  for (const consumer of options.consumers ?? []) await bus.consume(consumer);
  const connected = bus.start(options.brokerTimeoutMs ?? 60_000);
  if (options.brokerTimeoutMs !== undefined) await connected;
  else connected.catch((err: Error) => log.warn({ err }, 'broker still not connected; retrying'));
  bus.on('connected', () => void outbox.sweep());
  outbox.start();
  const stopJobs = (options.jobs ?? []).map((job) => job(runtime));
  // Dead-letter queue depths, read from the broker at scrape (nothing asked while it is away).
  const stopDepths = beforeScrape(async () => {
    const depths = await bus.deadLetterDepths();
    for (const [queue, depth] of depths ?? []) getMetrics().deadLetterQueueDepth.set({ queue }, depth);
  });
  const app = options.createApp(runtime);
  // A port in use must stop the service, not leave it running with nothing listening (express
  // 5's app.listen calls its callback on an error too, so the server is made here).
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(`${options.name} cannot listen on port ${config.PORT}: ${err.code ?? err.message}`)),
    );
    server.listen({ port: config.PORT, host: config.HOST }, resolve);
  }).catch(async (err: unknown) => {
    stopDepths();
    await outbox.stop();
    await bus.close();
    throw err;
  });
  // Longer than any load balancer's idle timeout, so it closes idle connections first.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  log.info({ port }, `${options.name} listening`);
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    runtime,
    closers: [
      ...stopJobs,
      async () => {
        stopDepths();
      },
      () => outbox.stop(),
      () => bus.close(),
    ],
    startDraining: () => {
      draining = true;
    },
  };
}

/**
 * The composition root every service shares: database (indexes first), then `startRuntime`;
 * graceful shutdown in the reverse order.
 */
export async function runService(options: RunOptions): Promise<Server> {
  const { config, log } = options;
  await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB ?? options.name, log });
  await ensureIndexes(options.models);
  await ensureOutboxIndexes(options.outboxSources ?? []);
  const { server, closers, startDraining } = await startRuntime(options);
  handleShutdown({
    log,
    server,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    graceMs: shutdownGraceMs(config),
    onSignal: startDraining,
    // Last: the spans of everything above are flushed to the exporter.
    closers: [...closers, () => disconnectMongo(), () => shutdownTracing()],
  });
  return server;
}

/**
 * `runService` for a process entry point: a failure to start is logged and ends the process, and
 * so does an unhandled rejection or an uncaught exception (the orchestrator restarts it; going
 * on in an unknown state could apply a step twice or never) — by `exitProcess`, which a stuck
 * thread-pool thread (a DNS lookup) cannot hold up.
 */
export function startService(options: RunOptions): void {
  process.on('unhandledRejection', (reason: unknown) => {
    options.log.fatal({ err: reason }, 'unhandled promise rejection; exiting');
    exitProcess(1);
  });
  process.on('uncaughtException', (err: Error) => {
    options.log.fatal({ err }, 'uncaught exception; exiting');
    exitProcess(1);
  });
  runService(options).catch((err: unknown) => {
    options.log.fatal({ err }, 'could not start');
    exitProcess(1);
  });
}

/** Stops what `startRuntime` started (tests): the server first, then the rest in order. */
export async function stopRuntime(started: StartedRuntime): Promise<void> {
  started.server.closeAllConnections();
  await new Promise((resolve) => started.server.close(resolve));
  for (const close of started.closers) await close();
}

/**
 * A background job for `jobs`: runs `task` every `intervalMs`, never two at once; a failure is
 * logged and the next run tries again. Each run counts in `job_runs_total{job_name,outcome}` and
 * `job_duration_seconds{job_name}`. Stopping waits for the run in progress.
 */
export function periodicJob(name: string, intervalMs: number, task: () => Promise<unknown>): (runtime: Runtime) => () => Promise<void> {
  return ({ log }) => {
    let running: Promise<unknown> | null = null;
    const { jobRuns, jobDuration } = getMetrics();
    const timer = setInterval(() => {
      if (running) return;
      const end = jobDuration.startTimer({ job_name: name });
      running = task()
        .then(
          () => jobRuns.inc({ job_name: name, outcome: 'ok' }),
          (err: unknown) => {
            jobRuns.inc({ job_name: name, outcome: 'failed' });
            log.warn({ err, job: name }, 'background job failed');
          },
        )
        .finally(() => {
          end();
          running = null;
        });
    }, intervalMs);
    timer.unref();
    return async () => {
      clearInterval(timer);
      await running;
    };
  };
}

/**
 * A service as its composition builds it, for component tests: the database (once per
 * process) with its indexes, the broker awaited, and no consumers or jobs — the test drives
 * those itself. Stop it with `stopRuntime`.
 */
export async function startComponent(options: RunOptions, dbName: string): Promise<StartedRuntime> {
  if (!isMongoReady()) await connectMongo({ url: options.config.MONGO_URL, dbName, log: options.log });
  await ensureIndexes(options.models);
  await ensureOutboxIndexes(options.outboxSources ?? []);
  return startRuntime({ ...options, consumers: [], jobs: [], brokerTimeoutMs: 30_000 });
}
