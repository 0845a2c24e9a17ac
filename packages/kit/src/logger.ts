import pino, { type DestinationStream, type Logger } from 'pino';
import { redactQuerySecrets } from './query-secrets';
import { traceLogFields } from './tracing';

export { redactQuerySecrets };

export type { Logger };

/** Paths never written to a log: credentials, tokens, secrets. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-chapa-signature"]',
  'res.headers["set-cookie"]',
  'password',
  '*.password',
  'token',
  '*.token',
  'accessToken',
  '*.accessToken',
  'refreshToken',
  '*.refreshToken',
  'secret',
  '*.secret',
];

/**
 * stdout batched: lines gathered up to 4 KiB, written by one synchronous write, and whatever
 * waits written every 250 ms and when the process exits — a write per log line cost the hot paths
 * more than their own work (bench/README.md). The writes stay synchronous on
 * purpose: an asynchronous one runs on libuv's thread pool, and a shutdown that ends the process
 * while the pool is busy (kit's exitProcess) would lose it, or print it after "stopped". At most
 * 16 MiB wait (a stalled stdout drops lines beyond that rather than grow without bound); a
 * process killed outright (SIGKILL) loses at most its last 250 ms of lines.
 */
export function bufferedStdout(): DestinationStream {
  const destination = pino.destination({ dest: 1, sync: true, minLength: 4096, maxLength: 16 * 1024 * 1024 });
  // sonic-boom's flushSync also fsyncs the descriptor, which blocks the thread on a disk when
  // stdout is a file: a flush happens only when a line was written since the last one.
  let unflushed = false;
  const write = destination.write.bind(destination);
  destination.write = (line: string) => {
    unflushed = true;
    return write(line);
  };
  const flush = () => {
    if (!unflushed) return;
    unflushed = false;
    try {
      destination.flushSync();
    } catch {
      // stdout is gone (or busy, EAGAIN): the lines wait for the next flush.
      unflushed = true;
    }
  };
  setInterval(flush, 250).unref();
  process.once('exit', flush);
  return destination;
}

/**
 * A service's logger: credentials in fields and headers redacted by path, and every line
 * scrubbed of secrets in query strings (request logs write URLs, and a checkout link is
 * `…?token=`). A line written inside a traced operation carries `trace_id` and `span_id`.
 * `destination`: stdout written synchronously, line by line, by default (the gateway and the
 * write-path services pass `bufferedStdout()`). Never pino's own default, which writes on libuv's
 * thread pool: a process that ends by `exitProcess` right after its last line (a failed migration,
 * a refused start) could lose that line, the one that says why.
 */
export function createLogger(name: string, level: string = process.env.LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    hooks: { streamWrite: redactQuerySecrets },
    // Inside a traced operation (a request, a message's handling): its `trace_id` and `span_id`.
    mixin: traceLogFields,
  };
  return pino(options, destination ?? pino.destination({ dest: 1, sync: true }));
}
