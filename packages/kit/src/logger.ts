import pino, { type DestinationStream, type Logger } from 'pino';
import { traceLogFields } from './tracing';

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
 * Query parameters whose values are credentials: the hosted checkout's `token`, any
 * `*_token`, `*secret`, `password`, `signature`, `api_key`/`apikey`, OAuth's `code`.
 */
const QUERY_SECRET = /([?&](?:[\w.-]*token|[\w.-]*secret|password|signature|sig|api_key|apikey|key|code)=)[^&#\s"\\]*/gi;

/** A request target or log line with the values of secret query parameters blanked. */
export function redactQuerySecrets(text: string): string {
  return text.includes('=') ? text.replace(QUERY_SECRET, '$1[redacted]') : text;
}

/**
 * A service's logger: credentials in fields and headers redacted by path, and every line
 * scrubbed of secrets in query strings (request logs write URLs, and a checkout link is
 * `…?token=`). A line written inside a traced operation carries `trace_id` and `span_id`. `destination`: pino's stdout by default (the gateway passes an asynchronous one).
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
  return destination ? pino(options, destination) : pino(options);
}
