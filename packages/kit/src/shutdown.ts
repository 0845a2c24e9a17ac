import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { Logger } from './logger';

export interface ShutdownOptions {
  log: Logger;
  server: Server;
  /** Run in order after the server stopped accepting and finished in-flight requests. */
  closers: Array<() => Promise<void>>;
  timeoutMs?: number;
  /** How long requests are still served (answers say `Connection: close`) before the listener closes. */
  graceMs?: number;
  /** Called at once on the signal: `/readyz` turns 503 (`startRuntime`'s `startDraining`). */
  onSignal?: () => void;
}

/** What the drain needs to know of each open connection. */
interface ConnectionState {
  inFlight: number;
  lastActiveAt: number;
}

/**
 * SIGTERM/SIGINT: `/readyz` turns 503 at once (`onSignal`), requests are still served for
 * `graceMs` (SHUTDOWN_GRACE_MS: the orchestrator removes the endpoint meanwhile; a preStop
 * sleep in front of it covers its propagation), then stop accepting, let in-flight requests
 * finish, then stop consumers (the message being handled finishes), the relay, the broker and
 * the database, and exit. A stuck step cannot keep the pod alive past `timeoutMs`
 * (SHUTDOWN_TIMEOUT_MS, counted from the signal, grace included).
 *
 * The HTTP drain, for keep-alive clients such as the gateway's socket pool:
 * 1. For `graceMs` every answer says `Connection: close`, so each socket the client uses is
 *    retired after its answer (and an orchestrator takes the pod out of its endpoints meanwhile).
 * 2. Then the listener stops accepting, without Node's "close every idle connection", which
 *    also destroys sockets whose request has arrived but not yet been parsed (a reset at the
 *    client). Only sockets left idle since before the signal are closed: a client that has not
 *    used one for the whole grace period is not about to (and the gateway sends an idempotent
 *    request again when a pooled socket was closed under it).
 * 3. Everything else ends with its answer; then the closers run.
 *
 * Either way the process ends through `exitProcess`, which does not wait for libuv's thread pool.
 */
export function handleShutdown({ log, server, closers, timeoutMs = 25_000, graceMs = 1_000, onSignal }: ShutdownOptions): void {
  const connections = new Map<Socket, ConnectionState>();
  /** Answers not yet sent: those begun before the signal must also say `Connection: close`. */
  const unanswered = new Set<ServerResponse>();
  let draining = false;
  server.on('connection', (socket: Socket) => {
    connections.set(socket, { inFlight: 0, lastActiveAt: Date.now() });
    socket.once('close', () => connections.delete(socket));
  });
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = connections.get(req.socket);
    if (draining) res.setHeader('Connection', 'close');
    else {
      unanswered.add(res);
      res.once('close', () => unanswered.delete(res));
    }
    if (!state) return;
    state.inFlight += 1;
    state.lastActiveAt = Date.now();
    res.once('close', () => {
      state.inFlight -= 1;
      state.lastActiveAt = Date.now();
    });
  });

  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    draining = true;
    onSignal?.();
    // A request in flight at the signal would otherwise leave its socket open and idle after its
    // answer, holding the drain until the timeout.
    for (const res of unanswered) if (!res.headersSent) res.setHeader('Connection', 'close');
    const signalledAt = Date.now();
    log.info({ signal, graceMs, timeoutMs }, 'shutting down: not ready; serving through the grace period, then draining');
    setTimeout(() => {
      log.error('shutdown timed out; exiting');
      exitProcess(1);
    }, timeoutMs).unref();
    await new Promise((resolve) => setTimeout(resolve, graceMs));
    const closeStale = () => {
      for (const [socket, state] of connections) if (state.inFlight === 0 && state.lastActiveAt < signalledAt) socket.destroy();
    };
    await new Promise<void>((resolve) => {
      // net.Server's close: stop accepting, call back when the last connection has ended.
      NetServer.prototype.close.call(server, () => resolve());
      closeStale();
      const sweeper = setInterval(closeStale, 100);
      sweeper.unref();
    });
    for (const close of closers) {
      await close().catch((err: unknown) => log.error({ err }, 'error while closing'));
    }
    log.info('stopped');
    exitProcess(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

/**
 * Ends the process with `code` now, as `process.exit` does ('exit' listeners run), but without
 * waiting for libuv's thread pool: `process.exit` joins the pool's threads, so it blocks while a
 * thread is stuck. A DNS lookup (getaddrinfo runs in the pool) of a database or broker host that
 * has just vanished — compose's `down` stops every container at once, and the drivers' reconnect
 * attempts look the names up — can hold a thread for tens of seconds; the process then outlives
 * SHUTDOWN_TIMEOUT_MS until SIGKILLed. Here the process image is replaced (execve, same PID:
 * the kernel ends the other threads at once) by a node that exits with `code`. Where there is
 * no `process.execve` (Windows), `process.exit`.
 */
export function exitProcess(code: number): never {
  if (typeof process.execve !== 'function') process.exit(code);
  process.exitCode = code;
  try {
    process.emit('exit', code);
  } catch {
    // A listener's failure does not keep the process alive.
  }
  process.removeAllListeners('exit');
  try {
    // No environment: NODE_OPTIONS must not load anything into the exiting node.
    process.execve(process.execPath, [process.execPath, '-e', `process.exit(${Math.trunc(code)})`], {});
  } catch {
    // execve refused (in a worker thread, say): the ordinary way.
  }
  process.exit(code);
}
