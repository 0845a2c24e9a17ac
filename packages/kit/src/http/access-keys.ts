import type * as JwksRsa from 'jwks-rsa';
import { Unauthenticated } from '../errors';
import type { Logger } from '../logger';
import { propagateTraceTo } from '../tracing';

/**
 * The public keys access tokens are verified with, by the `kid` in a token's header. `keyFor`
 * answers the PEM of that key, or throws Unauthenticated when no key of the set has that id.
 */
export interface AccessKeys {
  keyFor(kid: string | undefined): Promise<string>;
  /** Whether the first key set is loaded (a readiness check; absent: always). */
  loaded?: () => boolean;
  /** Starts loading and refreshing in the background; answers the stop function. */
  start?: () => () => void;
}

const refused = () => new Unauthenticated('The access token is not valid');

/** One public key (`JWT_PUBLIC_KEY`): every token is checked against it, whatever its `kid`. */
export function staticAccessKeys(publicKeyPem: string): AccessKeys {
  return { keyFor: async () => publicKeyPem };
}

export interface JwksAccessKeysOptions {
  /** The gateway's JWKS, on its internal address. */
  url: string;
  /** How long a key the JWKS served is used before it is asked again (a key removed from the JWKS is refused after it). */
  cacheSeconds: number;
  /** Fetches of the JWKS per minute at most (a token with an unknown `kid` costs one). */
  requestsPerMinute: number;
  /** While the JWKS cannot be fetched, keys it served within this long are still used. */
  staleSeconds: number;
  log: Logger;
  timeoutMs?: number;
}

/** The JWKS-backed set; `refresh` fetches the whole set now. */
export interface JwksAccessKeys extends AccessKeys {
  loaded: () => boolean;
  start: () => () => void;
  refresh: () => Promise<void>;
}

/**
 * The gateway's keys, by `kid`, from its JWKS with jwks-rsa: each key is cached for
 * `cacheSeconds`; a `kid` not in the cache fetches the JWKS once (rate limited, concurrent asks
 * for one `kid` share the fetch); a `kid` the JWKS does not hold is refused. The whole set is
 * also fetched at start (retried until it succeeds: `loaded` is the readiness check) and every
 * `cacheSeconds`, and kept: while the gateway cannot be reached a key of that set is still used
 * for `staleSeconds` after it was last served, so tokens keep verifying through a short outage.
 */
export function jwksAccessKeys(options: JwksAccessKeysOptions): JwksAccessKeys {
  // Loaded only for a JWKS (jwks-rsa and jose, ≈ 1 MB of heap and 80 modules): a process that
  // verifies with one public key never holds them.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { JwksClient, JwksRateLimitError, SigningKeyNotFoundError } = require('jwks-rsa') as typeof JwksRsa;
  // The gateway is one of ours: its JWKS fetches carry the trace context.
  propagateTraceTo(options.url);
  const client = new JwksClient({
    jwksUri: options.url,
    cache: true,
    cacheMaxAge: options.cacheSeconds * 1000,
    cacheMaxEntries: 20,
    rateLimit: true,
    jwksRequestsPerMinute: options.requestsPerMinute,
    timeout: options.timeoutMs ?? 5_000,
  });
  /** The last set served: kid → its PEM and when it was last seen in the JWKS. */
  let known = new Map<string, { pem: string; seenAt: number }>();
  let ready = false;
  let lastWarnedAt = 0;
  const remember = (kid: string, pem: string) => known.set(kid, { pem, seenAt: Date.now() });
  const refresh = async () => {
    const keys = await client.getSigningKeys();
    const next = new Map<string, { pem: string; seenAt: number }>();
    for (const key of keys) if (key.kid) next.set(key.kid, { pem: key.getPublicKey(), seenAt: Date.now() });
    known = next;
    ready = true;
  };
  const keyFor = async (kid: string | undefined): Promise<string> => {
    if (!kid) throw refused();
    try {
      const key = await client.getSigningKey(kid);
      const pem = key.getPublicKey();
      remember(kid, pem);
      return pem;
    } catch (err) {
      if (err instanceof SigningKeyNotFoundError) {
        known.delete(kid);
        throw refused();
      }
      // The JWKS cannot be fetched now (the gateway away, a timeout, the fetch limit reached).
      const stale = known.get(kid);
      if (stale && Date.now() - stale.seenAt <= options.staleSeconds * 1000) return stale.pem;
      // At most one line per 10 s: tokens with invented kids must not flood the log.
      if (!(err instanceof JwksRateLimitError) && Date.now() - lastWarnedAt > 10_000) {
        lastWarnedAt = Date.now();
        options.log.warn({ err, kid }, 'JWKS unavailable and the key is not known; token refused');
      }
      throw refused();
    }
  };
  const start = () => {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let failures = 0;
    const run = async () => {
      try {
        await refresh();
        failures = 0;
      } catch (err) {
        failures += 1;
        options.log.warn({ err, url: options.url }, ready ? 'JWKS refresh failed; keeping the keys' : 'JWKS not loaded yet; retrying');
      }
      if (stopped) return;
      // Until the first set is loaded: retried at 0.5 s, doubling to 10 s; then every cacheSeconds.
      const delay = ready && failures === 0 ? options.cacheSeconds * 1000 : Math.min(10_000, 500 * 2 ** Math.min(failures - 1, 5));
      timer = setTimeout(() => void run(), delay);
      timer.unref();
    };
    void run();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  };
  return { keyFor, loaded: () => ready, start, refresh };
}

export interface AccessKeysConfig {
  JWT_PUBLIC_KEY?: string;
  JWT_JWKS_URL?: string;
  JWT_JWKS_CACHE_SECONDS: number;
  JWT_JWKS_REQUESTS_PER_MINUTE: number;
  JWT_JWKS_STALE_SECONDS: number;
}

/** A service's keys from its configuration: the gateway's JWKS when `JWT_JWKS_URL` is set, else the one `JWT_PUBLIC_KEY`. */
export function accessKeysFrom(config: AccessKeysConfig, log: Logger): AccessKeys {
  if (config.JWT_JWKS_URL)
    return jwksAccessKeys({
      url: config.JWT_JWKS_URL,
      cacheSeconds: config.JWT_JWKS_CACHE_SECONDS,
      requestsPerMinute: config.JWT_JWKS_REQUESTS_PER_MINUTE,
      staleSeconds: config.JWT_JWKS_STALE_SECONDS,
      log,
    });
  if (config.JWT_PUBLIC_KEY) return staticAccessKeys(config.JWT_PUBLIC_KEY);
  throw new Error('Invalid configuration:\n  JWT_JWKS_URL: required (or JWT_PUBLIC_KEY, one key)');
}
