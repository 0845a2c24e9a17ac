import pino, { type DestinationStream, type Logger } from 'pino';
import { REDACT_PATHS } from '@mkt/kit';

/** Query parameters that carry a secret: the checkout and return tokens (and any bearer in a URL). */
const QUERY_SECRET = /([?&](?:token|access_token|tx_token)=)[^&\s"\\]+/gi;

/** Blanks the values of secret query parameters in a log line (request URLs carry them). */
export function redactQuerySecrets(line: string): string {
  return line.replace(QUERY_SECRET, '$1[redacted]');
}

/**
 * The wallet's logger: kit's redaction of headers and fields, and every line scrubbed of
 * checkout tokens (the request log writes the URL, and a checkout link is `…?token=`).
 */
export function createWalletLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      name: 'wallet',
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { service: 'wallet' },
      timestamp: pino.stdTimeFunctions.isoTime,
      hooks: { streamWrite: redactQuerySecrets },
    },
    destination ?? pino.destination(1),
  );
}
