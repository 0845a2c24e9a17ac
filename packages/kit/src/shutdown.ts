import type { Server } from 'node:http';
import type { Logger } from './logger';

export interface ShutdownOptions {
  log: Logger;
  server: Server;
  /** Run in order after the server stopped accepting and finished in-flight requests. */
  closers: Array<() => Promise<void>>;
  timeoutMs?: number;
}

/**
 * SIGTERM/SIGINT: stop accepting, let in-flight requests finish, then stop consumers (the
 * message being handled finishes), the relay, the broker and the database, and exit. A stuck
 * step cannot keep the pod alive past `timeoutMs`.
 */
export function handleShutdown({ log, server, closers, timeoutMs = 20_000 }: ShutdownOptions): void {
  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log.info({ signal }, 'shutting down');
    setTimeout(() => {
      log.error('shutdown timed out; exiting');
      process.exit(1);
    }, timeoutMs).unref();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    for (const close of closers) {
      await close().catch((err: unknown) => log.error({ err }, 'error while closing'));
    }
    log.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
