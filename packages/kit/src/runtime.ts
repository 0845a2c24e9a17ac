import type { Server } from 'node:http';
import type { Express } from 'express';
import { Bus } from './bus/bus';
import type { ConsumerSpec } from './bus/consumer';
import { OutboxRelay, type OutboxSource } from './bus/outbox';
import type { ReadinessCheck } from './http/create-service';
import type { Logger } from './logger';
import { connectMongo, disconnectMongo, ensureIndexes, isMongoReady, type AnyModel } from './mongo';
import { handleShutdown } from './shutdown';

export interface RuntimeConfig {
  PORT: number;
  MONGO_URL: string;
  MONGO_DB?: string;
  AMQP_URL: string;
  BUS_NAMESPACE?: string;
  SHUTDOWN_TIMEOUT_MS: number;
}

/** What a service's `createApp` gets from the composition root. */
export interface Runtime {
  log: Logger;
  bus: Bus;
  outbox: OutboxRelay;
  readiness: ReadinessCheck[];
}

export interface RunOptions {
  name: string;
  config: RuntimeConfig;
  log: Logger;
  models: AnyModel[];
  outboxSources?: OutboxSource[];
  consumers?: ConsumerSpec[];
  createApp: (runtime: Runtime) => Express;
  /** Background jobs (sweepers); each returns its stop function. */
  jobs?: Array<(runtime: Runtime) => () => Promise<void>>;
}

/**
 * The composition root every service shares: database (indexes first), broker, outbox relay,
 * consumers, HTTP; graceful shutdown in the reverse order. The broker connects in the
 * background: until it does, `/readyz` says so and the relay keeps events in the outbox.
 */
export async function runService(options: RunOptions): Promise<Server> {
  const { config, log } = options;
  await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB ?? options.name, log });
  await ensureIndexes(options.models);
  const bus = new Bus({ url: config.AMQP_URL, log, namespace: config.BUS_NAMESPACE });
  const outbox = new OutboxRelay({ bus, log, sources: options.outboxSources ?? [] });
  const readiness: ReadinessCheck[] = [
    { name: 'mongo', check: isMongoReady },
    { name: 'broker', check: () => bus.isConnected() },
  ];
  const runtime: Runtime = { log, bus, outbox, readiness };
  for (const consumer of options.consumers ?? []) await bus.consume(consumer);
  bus.start().catch((err: Error) => log.warn({ err: err.message }, 'broker still not connected; retrying'));
  bus.on('connected', () => void outbox.sweep());
  outbox.start();
  const stopJobs = (options.jobs ?? []).map((job) => job(runtime));
  const app = options.createApp(runtime);
  const server = app.listen(config.PORT, () => log.info({ port: config.PORT }, `${options.name} listening`));
  // Longer than any load balancer's idle timeout, so it closes idle connections first.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  handleShutdown({
    log,
    server,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    closers: [...stopJobs, () => outbox.stop(), () => bus.close(), () => disconnectMongo()],
  });
  return server;
}

/** `runService` for a process entry point: a failure to start is logged and ends the process. */
export function startService(options: RunOptions): void {
  runService(options).catch((err: unknown) => {
    options.log.fatal({ err }, 'could not start');
    process.exit(1);
  });
}
