/**
 * Query parameters whose values are credentials, one rule for every place a request target is
 * written down (log lines, spans): the checkout pages' `token`, OAuth's `code`, keys, passwords,
 * signed-URL signatures, and any name ending in `token` or `secret` (`reset_token`,
 * `client_secret`). Names compare case-insensitively.
 */
export const SECRET_QUERY_PARAMS = [
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'code',
  'key',
  'api_key',
  'apikey',
  'secret',
  'client_secret',
  'password',
  'sig',
  'signature',
  'Signature',
  'AWSAccessKeyId',
  'X-Goog-Signature',
  'X-Goog-Credential',
  'X-Amz-Signature',
  'X-Amz-Credential',
  'X-Amz-Security-Token',
] as const;

const NAMED = new Set(SECRET_QUERY_PARAMS.map((name) => name.toLowerCase()));

export function isSecretQueryParam(name: string): boolean {
  const lower = name.toLowerCase();
  return NAMED.has(lower) || lower.endsWith('token') || lower.endsWith('secret');
}

/**
 * A parameter (`name=value`) of a query string, in a target or anywhere in a log line. Neither
 * runs past a `?`: a nested, unencoded query in a value (`?next=/pay?token=…`) is read as
 * parameters of its own.
 */
const QUERY_PARAM = /([?&])([^=&#?\s"\\]+)=([^&#?\s"\\]*)/g;

/** A request target or log line with the values of secret query parameters blanked. */
export function redactQuerySecrets(text: string, marker = '[redacted]'): string {
  if (!text.includes('=')) return text;
  return text.replace(QUERY_PARAM, (whole, mark: string, name: string) =>
    isSecretQueryParam(safeDecode(name)) ? `${mark}${name}=${marker}` : whole,
  );
}

/**
 * A request target (`/path?query`) as a span records it: each secret parameter reads `REDACTED`,
 * the marker the http instrumentation writes in `url.query` and `url.full`.
 */
export function redactedTarget(target: string): string {
  return target.includes('?') ? redactQuerySecrets(target, 'REDACTED') : target;
}

function safeDecode(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}
