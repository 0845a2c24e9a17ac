import { createServer, type RequestListener, type Server } from 'node:http';
import { Bus } from './bus/bus';
import type { ConsumerSpec } from './bus/consumer';
import { OutboxRelay, type OutboxSource } from './bus/outbox';
import type { ReadinessCheck } from './http/create-service';
import { accessKeysFrom, type AccessKeys, type AccessKeysConfig } from './http/access-keys';
import type { Logger } from './logger';
import { closeDatabase, isDatabaseReady, openDatabase, type AnyModel, type Database } from './mongo';
import { DatabaseBehindError, Migrator, runMigrateCommand, type Migration } from './migrations';
import { shutdownGraceMs } from './config';
import { beforeScrape, getMetrics } from './metrics';
import { exitProcess, handleShutdown } from './shutdown';
import { distrustIncomingTraceContext, shutdownTracing } from './tracing';

export interface RuntimeConfig {
  PORT: number;
  /** Unset: every interface; `npm start` says 127.0.0.1. */
  HOST?: string;
  MONGO_URL: string;
  MONGO_DB?: string;
  MONGO_TLS_CA_FILE?: string;
  MONGO_SOCKET_TIMEOUT_MS?: number;
  AMQP_URL: string;
  AMQP_TLS_CA_FILE?: string;
  BUS_NAMESPACE?: string;
  BUS_PUBLISHER_USERS?: string;
  SHUTDOWN_TIMEOUT_MS: number;
  SHUTDOWN_GRACE_MS?: number;
  NODE_ENV?: string;
}

/**
 * What every part of a service is built on, made by `createRuntime` before anything connects: the
 * database handle its models are bound to, the bus its consumers register on, the outbox relay its
 * writes hand events to, and the readiness checks `/readyz` answers from.
 */
export interface Runtime {
  name: string;
  log: Logger;
  db: Database;
  bus: Bus;
  outbox: OutboxRelay;
  readiness: ReadinessCheck[];
  /**
   * The keys access tokens are verified with (`mountEndpoints`' `publicKey`): the gateway's JWKS
   * or the one configured key; undefined when the configuration names neither.
   */
  accessKeys: AccessKeys | undefined;
  /** The collections whose documents carry pending events (their sweep index is the first migration's). */
  outboxSources: OutboxSource[];
  /** From now on `/readyz` answers 503 (SIGTERM; requests are still served). */
  startDraining: () => void;
}

export interface CreateRuntimeOptions {
  name: string;
  config: Pick<RuntimeConfig, 'AMQP_URL' | 'AMQP_TLS_CA_FILE' | 'BUS_NAMESPACE' | 'BUS_PUBLISHER_USERS'> & Partial<AccessKeysConfig>;
  log: Logger;
  /** The token keys; default: from the configuration (`JWT_JWKS_URL`, else `JWT_PUBLIC_KEY`), when it names one. */
  accessKeys?: AccessKeys;
  /** The database the service's models are bound to (`createDatabase()`). */
  db: Database;
  outboxSources?: OutboxSource[];
  /**
   * false: `/readyz` does not depend on the database (only reported). The gateway: its own
   * routes fail alone when its database is away, and proxying goes on. Default true.
   */
  readinessNeedsDatabase?: boolean;
}

/**
 * The first step of every composition: nothing connects here, so every part (repositories,
 * application services, consumers, the app) can be built at once, before the process starts.
 */
export function createRuntime(options: CreateRuntimeOptions): Runtime {
  const { config, log, db } = options;
  const bus = new Bus({
    url: config.AMQP_URL,
    log,
    namespace: config.BUS_NAMESPACE,
    publisherUsers: config.BUS_PUBLISHER_USERS,
    tlsCaFile: config.AMQP_TLS_CA_FILE,
  });
  const outboxSources = options.outboxSources ?? [];
  const outbox = new OutboxRelay({ bus, log, sources: outboxSources });
  let draining = false;
  const accessKeys =
    options.accessKeys ??
    (config.JWT_JWKS_URL || config.JWT_PUBLIC_KEY
      ? accessKeysFrom(
          {
            JWT_JWKS_URL: config.JWT_JWKS_URL,
            JWT_PUBLIC_KEY: config.JWT_PUBLIC_KEY,
            JWT_JWKS_CACHE_SECONDS: config.JWT_JWKS_CACHE_SECONDS ?? 300,
            JWT_JWKS_REQUESTS_PER_MINUTE: config.JWT_JWKS_REQUESTS_PER_MINUTE ?? 10,
            JWT_JWKS_STALE_SECONDS: config.JWT_JWKS_STALE_SECONDS ?? 900,
          },
          log,
        )
      : undefined);
  const readiness: ReadinessCheck[] = [
    { name: 'process', check: () => !draining, downAs: 'draining' },
    // Not ready until the first key set is loaded: a token could not be verified before.
    ...(accessKeys?.loaded ? [{ name: 'keys', check: accessKeys.loaded, downAs: 'loading' }] : []),
    { name: 'mongo', check: () => isDatabaseReady(db), required: options.readinessNeedsDatabase ?? true },
    { name: 'broker', check: () => bus.isConnected(), required: false },
  ];
  return {
    name: options.name,
    log,
    db,
    bus,
    outbox,
    readiness,
    accessKeys,
    outboxSources,
    startDraining: () => {
      draining = true;
    },
  };
}

/** A background job: started with the runtime, answers its stop function. */
export type Job = (runtime: Runtime) => () => Promise<void>;

/** A service as its composition built it: every part made, nothing connected yet. */
export interface ServiceDefinition {
  runtime: Runtime;
  config: RuntimeConfig;
  /** Every model of the service (bound to `runtime.db`): their indexes are its first migration's. */
  models: AnyModel[];
  /**
   * The migrations of the service's database, in order (`src/migrations/`). A process starts only
   * on a database that has had every one of them (`DatabaseBehindError` otherwise); they are run
   * by the service's migrate command, before the rollout, never by a serving process.
   */
  migrations?: Migration[];
  /** The HTTP handler: an express app (`createService`), or any request listener (the gateway's edge in front of one). */
  app: RequestListener;
  consumers?: ConsumerSpec[];
  /** Background jobs (sweepers); each returns its stop function. */
  jobs?: Job[];
  /** Wait this long for the broker before answering (tests); by default it connects in the background. */
  brokerTimeoutMs?: number;
  /**
   * Runs once the database is open and migrated, before the port opens (the gateway seeds its
   * admin here: no request can race its creation).
   */
  beforeListen?: () => Promise<void>;
  /**
   * The callers are not ours (the gateway, at the edge): their `traceparent`, `tracestate` and
   * `baggage` are not followed — each request starts a trace of this process's own sampling
   * (`distrustIncomingTraceContext`).
   */
  distrustIncomingTraceContext?: boolean;
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
 * database. `runService` and the component tests both start a service through here.
 */
export async function startRuntime(
  service: Omit<ServiceDefinition, 'models' | 'config'> & { config: Pick<RuntimeConfig, 'PORT' | 'HOST'> },
): Promise<StartedRuntime> {
  const { runtime, config } = service;
  const { bus, outbox, log } = runtime;
  for (const consumer of service.consumers ?? []) await bus.consume(consumer);
  const connected = bus.start(service.brokerTimeoutMs ?? 60_000);
  if (service.brokerTimeoutMs !== undefined) await connected;
  else connected.catch((err: Error) => log.warn({ err }, 'broker still not connected; retrying'));
  outbox.start();
  const stopJobs = (service.jobs ?? []).map((job) => job(runtime));
  // The token keys load (retried until they do) and refresh in the background.
  const stopKeys = runtime.accessKeys?.start?.();
  if (stopKeys)
    stopJobs.push(async () => {
      stopKeys();
    });
  // Dead-letter queue depths, read from the broker at scrape (nothing asked while it is away).
  const stopDepths = beforeScrape(async () => {
    const depths = await bus.deadLetterDepths();
    for (const [queue, depth] of depths ?? []) getMetrics().deadLetterQueueDepth.set({ queue }, depth);
  });
  // A port in use must stop the service, not leave it running with nothing listening (express
  // 5's app.listen calls its callback on an error too, so the server is made here).
  const server = createServer(service.app);
  if (service.distrustIncomingTraceContext) distrustIncomingTraceContext(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(`${runtime.name} cannot listen on port ${config.PORT}: ${err.code ?? err.message}`)),
    );
    server.listen({ port: config.PORT, host: config.HOST }, resolve);
  }).catch(async (err: unknown) => {
    stopDepths();
    await Promise.all(stopJobs.map((stop) => stop()));
    await outbox.stop();
    await bus.close();
    throw err;
  });
  // Longer than any load balancer's idle timeout, so it closes idle connections first.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  log.info({ port }, `${runtime.name} listening`);
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
    startDraining: runtime.startDraining,
  };
}

/** The migrator of a service's database (open it first): its migrations, with its models and outbox sources. */
export function serviceMigrator(
  service: Pick<ServiceDefinition, 'runtime' | 'models' | 'migrations'>,
  options: { leaseMs?: number; waitMs?: number } = {},
): Migrator {
  const { runtime } = service;
  return new Migrator({
    ...options,
    context: { db: runtime.db, log: runtime.log, models: service.models, outboxSources: runtime.outboxSources },
    migrations: service.migrations ?? [],
  });
}

/**
 * The database of a service opened and checked (or, for the tests, migrated), then
 * `beforeListen`. A serving process never migrates: a database behind the migrations this release
 * knows stops the start with `DatabaseBehindError`, which names them and the command to run.
 */
async function prepareDatabase(service: ServiceDefinition, dbName: string, migrations: 'check' | 'apply'): Promise<void> {
  const { runtime, config } = service;
  if (!isDatabaseReady(runtime.db))
    await openDatabase(runtime.db, {
      url: config.MONGO_URL,
      dbName,
      log: runtime.log,
      tlsCaFile: config.MONGO_TLS_CA_FILE,
      socketTimeoutMs: config.MONGO_SOCKET_TIMEOUT_MS,
    });
  const migrator = serviceMigrator(service);
  if (migrations === 'apply') await migrator.up();
  else {
    const pending = await migrator.pending();
    if (pending.length > 0) throw new DatabaseBehindError(runtime.db.name, pending);
  }
  await service.beforeListen?.();
}

/**
 * The process every service shares: its database (checked to have had every migration), then
 * `startRuntime`; graceful shutdown in the reverse order.
 */
export async function runService(service: ServiceDefinition): Promise<Server> {
  const { config, runtime } = service;
  await prepareDatabase(service, config.MONGO_DB ?? runtime.name, 'check');
  const { server, closers, startDraining } = await startRuntime(service);
  handleShutdown({
    log: runtime.log,
    server,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    graceMs: shutdownGraceMs(config),
    onSignal: startDraining,
    // Last: the spans of everything above are flushed to the exporter.
    closers: [...closers, () => closeDatabase(runtime.db), () => shutdownTracing()],
  });
  return server;
}

/**
 * A service's migrate command (`node dist/migrate.js up|down|status`, a one-shot job before the
 * rollout): its database opened, the command run under the lease, the database closed. Answers
 * the exit code.
 */
export async function runMigrations(service: ServiceDefinition, argv: string[]): Promise<number> {
  const { config, runtime } = service;
  const dbName = config.MONGO_DB ?? runtime.name;
  // A migration's commands may each run long and silent (an index build, an update of a whole
  // collection): no socket timeout here; the job's own deadline bounds the run.
  await openDatabase(runtime.db, {
    url: config.MONGO_URL,
    dbName,
    log: runtime.log,
    tlsCaFile: config.MONGO_TLS_CA_FILE,
    socketTimeoutMs: 0,
  });
  try {
    return await runMigrateCommand(serviceMigrator(service), argv, (line) =>
      process.stdout.write(`${runtime.name} (${dbName}): ${line}\n`),
    );
  } finally {
    // Its own close is no outage to warn about.
    runtime.db.removeAllListeners('disconnected');
    await closeDatabase(runtime.db);
  }
}

/** `runMigrations` for a process entry point: a failure is logged and the process exits non-zero. */
export function startMigrations(service: ServiceDefinition, argv = process.argv.slice(2)): void {
  const { log } = service.runtime;
  runMigrations(service, argv).then(
    (code) => exitProcess(code),
    (err: unknown) => {
      log.fatal({ err }, 'migrations failed');
      exitProcess(1);
    },
  );
}

/**
 * `runService` for a process entry point: a failure to start is logged and ends the process, and
 * so does an unhandled rejection or an uncaught exception (the orchestrator restarts it; going
 * on in an unknown state could apply a step twice or never) — by `exitProcess`, which a stuck
 * thread-pool thread (a DNS lookup) cannot hold up.
 */
export function startService(service: ServiceDefinition): void {
  const { log } = service.runtime;
  process.on('unhandledRejection', (reason: unknown) => {
    log.fatal({ err: reason }, 'unhandled promise rejection; exiting');
    exitProcess(1);
  });
  process.on('uncaughtException', (err: Error) => {
    log.fatal({ err }, 'uncaught exception; exiting');
    exitProcess(1);
  });
  runService(service).catch((err: unknown) => {
    if (err instanceof DatabaseBehindError) log.fatal({ dbName: err.dbName, pending: err.pending }, err.message);
    else log.fatal({ err }, 'could not start');
    exitProcess(1);
  });
}

/**
 * A service as its composition builds it, for component tests: its database (named `dbName`)
 * migrated (as `npm test` has every database: the migrations run, not skipped), the broker awaited, and no consumers or jobs — the test drives those
 * itself. Stop it with `stopRuntime`; `mongoose.disconnect()` closes every service's database.
 */
export async function startComponent(service: ServiceDefinition, dbName: string): Promise<StartedRuntime> {
  await prepareDatabase(service, dbName, 'apply');
  return startRuntime({ ...service, consumers: [], jobs: [], brokerTimeoutMs: 30_000 });
}

/** Stops what `startRuntime` started (tests): the server first, then the rest in order. */
export async function stopRuntime(started: StartedRuntime): Promise<void> {
  started.server.closeAllConnections();
  await new Promise((resolve) => started.server.close(resolve));
  for (const close of started.closers) await close();
}

/**
 * A background job for `jobs`: runs `task` every `intervalMs`, never two at once; a failure is
 * logged and the next run tries again. Each run counts in `marketplace_job_runs_total{job_name,outcome}` and
 * `marketplace_job_duration_seconds{job_name}`. Stopping waits for the run in progress.
 */
export function periodicJob(name: string, intervalMs: number, task: () => Promise<unknown>): Job {
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
