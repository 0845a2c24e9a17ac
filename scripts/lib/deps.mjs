// Where the operations scripts (backup, restore, reconcile, dlq, migrate-queues) take their
// libraries from: the packages the services run on, resolved through packages that list them as
// production dependencies, so the same resolution works in a development checkout and in the
// tools image (docker/tools.Dockerfile), which holds production dependencies only.
//
// The MongoDB driver and amqplib come with a first connection that waits for the network: a
// one-shot Job can start before a NetworkPolicy admits its address, and its first connection is
// then refused, or times out, for a while. A connection failing that way is tried again until
// OPS_CONNECT_WAIT_MS (default 60 s) has passed; a certificate, a credential or anything else
// the server answers fails at once (docs/operations.md, "Connections").
// No `import.meta` here: the jest tests load this module through SWC as CommonJS.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** `require` as seen from `<root>/<dir>/package.json`. */
export const requireFrom = (root, dir) => createRequire(join(root, dir, 'package.json'));

/** How long a first connection waits for the network by default. */
export const DEFAULT_CONNECT_WAIT_MS = 60_000;
/** A name the DNS does not know yet (a Service just made) is waited for this long at most: a misspelt one never resolves. */
export const NAME_WAIT_MS = 15_000;
/** One AMQP attempt's socket timeout (a policy that drops packets answers nothing at all). */
export const AMQP_ATTEMPT_TIMEOUT_MS = 10_000;

/** What the network answers before it admits an address (or while a server starts): worth waiting for. */
const WAITING_CODES = new Set(['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EAI_AGAIN', 'ENOTFOUND']);
const CODE_IN_MESSAGE = /\b(ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ECONNRESET|EAI_AGAIN|ENOTFOUND)\b/;

/**
 * OPS_CONNECT_WAIT_MS: how long a first connection keeps trying, in milliseconds (0: one try).
 * @param {Record<string, string | undefined>} env
 */
export function connectWaitMs(env = process.env) {
  const raw = env.OPS_CONNECT_WAIT_MS;
  if (raw === undefined || raw === '') return DEFAULT_CONNECT_WAIT_MS;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`OPS_CONNECT_WAIT_MS must be a whole number of milliseconds, 0 or more (got ${raw})`);
  return value;
}

/**
 * Every error a thrown value carries: itself, its causes, and — a MongoDB server selection that
 * timed out — the last error of each server it tried.
 * @param {unknown} err
 * @returns {Array<Record<string, unknown>>}
 */
function errorsIn(err) {
  /** @type {Array<Record<string, unknown>>} */
  const found = [];
  /** @type {unknown[]} */
  const todo = [err];
  while (todo.length > 0 && found.length < 20) {
    const next = todo.shift();
    if (typeof next !== 'object' || next === null || found.includes(/** @type {Record<string, unknown>} */ (next))) continue;
    const fields = /** @type {Record<string, unknown>} */ (next);
    found.push(fields);
    todo.push(fields.cause);
    const servers = /** @type {{ servers?: unknown } | undefined} */ (fields.reason)?.servers;
    if (servers instanceof Map) for (const server of servers.values()) todo.push(/** @type {{ error?: unknown }} */ (server)?.error);
  }
  return found;
}

/**
 * The network code of a failed first connection when it is one to wait for (the address not
 * admitted yet, not listening yet, not resolvable yet); null when the connection must fail at
 * once: a certificate refused, credentials refused, a protocol error, anything the server answered.
 * @param {unknown} err
 * @returns {string | null}
 */
export function waitingCode(err) {
  const errors = errorsIn(err);
  const codes = errors.map((e) => e.code).filter((code) => typeof code === 'string');
  if (codes.length === 0) {
    // amqplib's own socket timeout ('connect ETIMEDOUT'), a driver's message naming the code.
    const named = errors.map((e) => CODE_IN_MESSAGE.exec(String(e.message ?? ''))?.[1]).find(Boolean);
    if (named) return named;
    return errors.some((e) => e.name === 'MongoNetworkTimeoutError') ? 'ETIMEDOUT' : null;
  }
  return codes.every((code) => WAITING_CODES.has(/** @type {string} */ (code))) ? /** @type {string} */ (codes[0]) : null;
}

/**
 * Why a first connection failed at once, said plainly.
 * @param {unknown} err
 */
function refusal(err) {
  const errors = errorsIn(err);
  const code = /** @type {string | undefined} */ (errors.map((e) => e.code).find((c) => typeof c === 'string'));
  const message = errors.map((e) => String(e.message ?? '')).find(Boolean) ?? String(err);
  if (code && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code))
    return `its TLS certificate was refused (${code}: ${message}); check the CA file (MONGO_TLS_CA_FILE, AMQP_TLS_CA_FILE) and the host name`;
  if (
    errors.some((e) => e.code === 18 || e.codeName === 'AuthenticationFailed') ||
    /ACCESS.REFUSED|authentication failed|auth.*fail/i.test(message)
  )
    return `its credentials were refused (${message}); check the user and password in the URL`;
  return message;
}

/** What a message names instead of a URL that cannot be parsed: never a part of it. */
const UNPARSED = 'the configured server';

/**
 * Where a URL points, without its credentials or options (what messages name), as `new URL`
 * parses it: everything before the last `@` of the authority is the user and password (amqplib and
 * the driver read `amqp://ops:s3cr@t@rabbit` so), cleared. A MongoDB list of hosts (`h1:27017,h2:27017`,
 * which `URL` refuses) is parsed with a placeholder host and put back. Anything `URL` cannot parse,
 * or whose path would still hold an `@`, is named `the configured server`.
 * @param {unknown} url
 */
export function whereOf(url) {
  if (typeof url !== 'string') return UNPARSED;
  /** @param {string} text @param {(href: string) => string} [back] */
  const parsed = (text, back = (href) => href) => {
    try {
      const where = new URL(text);
      where.username = '';
      where.password = '';
      where.search = '';
      where.hash = '';
      return where.pathname.includes('@') ? UNPARSED : back(where.href);
    } catch {
      return null;
    }
  };
  const whole = parsed(url);
  if (whole !== null) return whole;
  const authority = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(url);
  if (!authority) return UNPARSED;
  const [, scheme = '', credentialsAndHosts = '', rest = ''] = authority;
  const hosts = credentialsAndHosts.slice(credentialsAndHosts.lastIndexOf('@') + 1);
  // Only a list of plain host[:port] names: anything else may be a part of a password.
  if (!hosts.includes(',') || !hosts.split(',').every((host) => /^[a-z0-9.-]+(:\d+)?$/i.test(host))) return UNPARSED;
  return parsed(`${scheme}placeholder.invalid${rest}`, (href) => href.replace('placeholder.invalid', hosts)) ?? UNPARSED;
}

/**
 * Whether a MongoDB client for `url` with `options` speaks TLS: `tls=true` / `ssl=true`, a
 * `mongodb+srv://` URL (TLS by default), or `tls` / `ssl` in the options.
 * @param {unknown} url @param {Record<string, unknown> | undefined} options
 */
export function mongoUsesTls(url, options) {
  if (options?.tls === true || options?.ssl === true) return true;
  if (typeof url !== 'string') return false;
  const query = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
  const said = [...query.entries()].find(([key]) => /^(tls|ssl)$/i.test(key))?.[1]?.toLowerCase();
  if (said !== undefined) return said === 'true';
  return /^mongodb\+srv:/i.test(url);
}

/**
 * A server that requires TLS closes, or resets, a plain connection as soon as it starts: what a
 * failed first connection without TLS says then.
 * @param {unknown} err
 */
export function closedByServer(err) {
  return errorsIn(err).some(
    (e) =>
      e.code === 'ECONNRESET' ||
      e.code === 'EPIPE' ||
      /\b(ECONNRESET|EPIPE)\b|socket hang up|connection .*closed|closed by/i.test(String(e.message ?? '')),
  );
}

/** The hint a plain MongoDB connection closed by its server gets. */
export const MONGO_TLS_HINT = 'the server may require TLS: set MONGO_TLS_CA_FILE to its CA file (or tls=true in the URL)';

/**
 * Runs `attempt` until it connects. A failure the network answers (`waitingCode`) is tried again,
 * with a growing pause (0.25 s doubling to 2 s), until `waitMs` has passed since the first try
 * (a name not resolvable: `NAME_WAIT_MS` at most); any other failure is thrown at once, said plainly.
 * `hint(err)`, when it returns a text, ends the final message (what to check).
 * @template T
 * @param {string} what the server, for messages (no credentials)
 * @param {() => Promise<T>} attempt
 * @param {{ waitMs?: number, log?: (line: string) => void, hint?: (err: unknown) => string | undefined }} [options]
 * @returns {Promise<T>}
 */
export async function firstConnection(
  what,
  attempt,
  { waitMs = connectWaitMs(), log = (line) => console.error(line), hint = () => undefined } = {},
) {
  const started = Date.now();
  let pause = 250;
  let said = false;
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      const code = waitingCode(err);
      const hinted = () => {
        const text = hint(err);
        return text ? `; ${text}` : '';
      };
      if (code === null) throw new Error(`${what}: ${refusal(err)} (not tried again)${hinted()}`, { cause: err });
      const limit = code === 'ENOTFOUND' ? Math.min(waitMs, NAME_WAIT_MS) : waitMs;
      const waited = Date.now() - started;
      if (waited + pause > limit)
        throw new Error(
          `${what}: not reachable (${code}) after ${Math.round(waited / 1000)} s of trying (OPS_CONNECT_WAIT_MS=${waitMs})${hinted()}`,
          { cause: err },
        );
      if (!said) log(`[connect] ${what}: ${code}; trying again for up to ${Math.round(limit / 1000)} s`);
      said = true;
      await sleep(pause);
      pause = Math.min(pause * 2, 2_000);
    }
  }
}

/** @type {WeakMap<Function, Function>} */
const waitingClients = new WeakMap();

/**
 * The driver's MongoClient whose `connect` waits for the network (`firstConnection`): each try
 * is one of the driver's server selections (its `serverSelectionTimeoutMS`), given up at once
 * when a server's answer is one not to wait for (a certificate refused) rather than at its timeout.
 * @param {any} MongoClient
 */
function waitingMongoClient(MongoClient) {
  const known = waitingClients.get(MongoClient);
  if (known) return known;
  class WaitingMongoClient extends MongoClient {
    /** @param {string} url @param {object} [options] */
    constructor(url, options) {
      super(url, options);
      this.where = `MongoDB at ${whereOf(url)}`;
      this.plain = !mongoUsesTls(url, options);
    }

    async connect() {
      return firstConnection(this.where, () => this.tryOnce(), {
        waitMs: connectWaitMs(),
        hint: (err) => (this.plain && closedByServer(err) ? MONGO_TLS_HINT : undefined),
      });
    }

    async tryOnce() {
      /** @type {unknown} */
      let fatal = null;
      /** @param {{ failure?: unknown }} event */
      const onFailed = (event) => {
        if (fatal !== null || waitingCode(event.failure) !== null) return;
        fatal = event.failure;
        this.close().catch(() => undefined);
      };
      this.on('serverHeartbeatFailed', onFailed);
      try {
        return await super.connect();
      } catch (err) {
        await this.close().catch(() => undefined);
        throw fatal ?? err;
      } finally {
        this.off('serverHeartbeatFailed', onFailed);
      }
    }
  }
  waitingClients.set(MongoClient, WaitingMongoClient);
  return WaitingMongoClient;
}

/**
 * The MongoDB driver mongoose brings to the services (wallet's), not a second copy; its
 * `MongoClient` waits for the network on its first connection (`firstConnection`).
 */
export const mongodb = (root) => {
  const driver = createRequire(requireFrom(root, 'services/wallet').resolve('mongoose'))('mongodb');
  return { ...driver, MongoClient: waitingMongoClient(driver.MongoClient) };
};

/**
 * amqplib as packages/kit (the services' bus) has it; its `connect` waits for the network
 * (`firstConnection`), each try bounded by `AMQP_ATTEMPT_TIMEOUT_MS` unless the caller sets `timeout`.
 */
export const amqplib = (root) => {
  const lib = requireFrom(root, 'packages/kit')('amqplib');
  return {
    ...lib,
    /** @param {unknown} url @param {object} [socketOptions] */
    connect: (url, socketOptions = {}) =>
      firstConnection(`RabbitMQ at ${whereOf(url)}`, () => lib.connect(url, { timeout: AMQP_ATTEMPT_TIMEOUT_MS, ...socketOptions }), {
        waitMs: connectWaitMs(),
      }),
  };
};

/** One of kit's public areas (`db`, `bus`…), built: what the services run. */
export const kitArea = (root, area) => requireFrom(root, 'packages/kit')(`@mkt/kit/${area}`);

/**
 * The TLS options of a MongoDB client for `url`, by the services' rule (kit's `mongoTlsOptions`):
 * with MONGO_TLS_CA_FILE, TLS verified against that CA; a URL turning verification off is refused.
 */
export const mongoTls = (root, url, env = process.env) => kitArea(root, 'db').mongoTlsOptions(url, env.MONGO_TLS_CA_FILE || undefined);

/**
 * The socket options of an AMQP connection to `url`, by the services' rule (kit's `amqpTlsOptions`):
 * with AMQP_TLS_CA_FILE (an `amqps://` url), the broker's certificate verified against that CA.
 */
export const amqpTls = (root, url, env = process.env) => kitArea(root, 'bus').amqpTlsOptions(url, env.AMQP_TLS_CA_FILE || undefined);
