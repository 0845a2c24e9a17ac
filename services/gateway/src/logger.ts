import pino, { type DestinationStream, type Logger } from 'pino';
import { REDACT_PATHS } from '@mkt/kit';

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
 * The gateway's logger: kit's redaction of headers and fields, and every line scrubbed of
 * secrets in query strings (the access log writes each request's URL, and a checkout link
 * proxied to the wallet is `…?token=`).
 */
export function createGatewayLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      name: 'gateway',
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { service: 'gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      hooks: { streamWrite: redactQuerySecrets },
    },
    destination ?? pino.destination(1),
  );
}
