/**
 * Retries of calls that are safe to repeat, with what every runtime has (fetch, AbortSignal,
 * setTimeout): Node.js ≥ 20 and browsers alike.
 *
 * A call is repeated only when repeating it cannot do its work twice: a read (GET, HEAD), or an
 * operation that takes an `Idempotency-Key`, every attempt carrying the same key (the server
 * answers a repeated key with the first answer). It is repeated after a network failure or a
 * time-out, a 409 `conflict` of a keyed operation (the first attempt under that key is still being
 * processed), a 429 (after its `Retry-After`) and a 5xx, at most `maxNetworkRetries` times, waiting
 * an exponential backoff with jitter between attempts.
 */
export interface RetryOptions {
  /** How many times a call safe to repeat is sent again (default 2; 0: never). */
  maxNetworkRetries?: number;
  /** The first wait between attempts in milliseconds (default 500); it doubles on every retry. */
  initialRetryDelayMs?: number;
  /** The longest backoff between attempts in milliseconds (default 5000). */
  maxRetryDelayMs?: number;
  /**
   * The longest `Retry-After` honoured, in milliseconds (default 60000): an answer that asks for a
   * longer wait is answered to the caller as it is.
   */
  maxRetryAfterMs?: number;
}

export const RETRY_DEFAULTS: Required<RetryOptions> = {
  maxNetworkRetries: 2,
  initialRetryDelayMs: 500,
  maxRetryDelayMs: 5000,
  maxRetryAfterMs: 60_000,
};

/** The error code the idempotency layer answers (409) while an attempt under the same key runs. */
export const IN_PROGRESS_CODE = 'conflict';

/**
 * The backoff before retry number `retry` (1 for the first): `initial · 2^(retry-1)`, at most
 * `max`, of which a random part of up to half is taken off (jitter: clients failing together do
 * not come back together); a `Retry-After` asking for longer wins.
 */
export function backoffMs(
  retry: number,
  options: Pick<Required<RetryOptions>, 'initialRetryDelayMs' | 'maxRetryDelayMs'>,
  askedMs = 0,
  random: () => number = Math.random,
): number {
  const exponential = Math.min(options.maxRetryDelayMs, options.initialRetryDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.max(exponential * (1 - random() / 2), askedMs);
}

/**
 * `Retry-After` in milliseconds: delta-seconds or an HTTP date (`now` to measure it from);
 * undefined when absent or unreadable.
 */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Why an answer is worth another attempt (undefined: answer it). */
export async function retryReason(response: Response, keyed: boolean): Promise<string | undefined> {
  if (response.status === 429) return '429';
  if (response.status >= 500) return String(response.status);
  if (response.status === 409 && keyed && (await errorCode(response)) === IN_PROGRESS_CODE) return '409 in progress';
  return undefined;
}

async function errorCode(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.clone().json()) as { errors?: Array<{ code?: unknown }> };
    const code = body?.errors?.[0]?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Sends `request` through `send`, again (a copy of it, the same headers, body and key) while the
 * answer or the failure is worth it and retries are left. `keyed`: the request carries the
 * operation's Idempotency-Key; only then, or for a read, is it repeated at all. `mayRetry`: whether
 * another attempt may still be sent (asked before each one).
 */
export async function sendWithRetries(
  request: Request,
  send: (request: Request) => Promise<Response>,
  options: Required<RetryOptions>,
  keyed: boolean,
  mayRetry: () => boolean = () => true,
): Promise<Response> {
  const safe = keyed || request.method === 'GET' || request.method === 'HEAD';
  if (!safe || options.maxNetworkRetries <= 0) return send(request);
  for (let retry = 0; ; retry += 1) {
    const last = retry >= options.maxNetworkRetries;
    let response: Response;
    try {
      response = await send(last ? request : request.clone());
    } catch (err) {
      // The caller's own abort is final; a network failure or a time-out of the exchange is not.
      if (last || request.signal.aborted || !mayRetry()) throw err;
      await sleep(backoffMs(retry + 1, options), request.signal);
      if (!mayRetry()) throw err;
      continue;
    }
    if (last || !mayRetry() || !(await retryReason(response, keyed))) return response;
    const asked = retryAfterMs(response.headers.get('retry-after'));
    if (asked !== undefined && asked > options.maxRetryAfterMs) return response;
    await sleep(backoffMs(retry + 1, options, asked), request.signal);
    if (!mayRetry()) return response;
    await response.body?.cancel();
  }
}

/** A random v4 UUID: `crypto.randomUUID` where there is one (it needs a secure context in browsers), else from `getRandomValues`. */
export function randomUuid(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  const bytes = c.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A signal that aborts when any of `signals` does (`AbortSignal.any`, or its equivalent where it is missing). */
export function anySignal(signals: AbortSignal[]): AbortSignal {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any(signals);
  const controller = new AbortController();
  for (const signal of signals) {
    if (signal.aborted) {
      controller.abort(signal.reason);
      break;
    }
    signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
  }
  return controller.signal;
}
