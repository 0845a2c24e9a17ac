import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ReferencePrefix } from '@mkt/contracts/core';

/** `MONGO_SOCKET_TIMEOUT_MS` unset: a command's answer waited for 30 s at most. */
export const DEFAULT_MONGO_SOCKET_TIMEOUT_MS = 30_000;

/** What every service reads from its environment; a service extends it with its own keys. */
export const BaseEnv = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  /** The address the HTTP port binds; unset: every interface (a container must be reachable). */
  HOST: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  MONGO_URL: z.string().min(1),
  MONGO_DB: z.string().min(1).optional(),
  /**
   * The CA (PEM) MongoDB's server certificate is verified against: set, the connection is TLS
   * (`tls=true` in `MONGO_URL` alone verifies against the system's CAs). Unreadable: no start.
   */
  MONGO_TLS_CA_FILE: z.preprocess((value) => (value === '' ? undefined : value), z.string().min(1).optional()),
  /**
   * How long a connection to MongoDB may stay silent while a command waits for its answer before
   * the driver gives that connection up and fails the command (`openDatabase`): a server stuck or
   * a network that drops packets without a reset ends in a bounded time, not when the OS breaks
   * the connection (hours). A serving process sends no change stream, tailable cursor or long
   * aggregation (kit's README: the reads that could still pass it on a big, slow server).
   */
  MONGO_SOCKET_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(DEFAULT_MONGO_SOCKET_TIMEOUT_MS),
  AMQP_URL: z.string().min(1),
  /** The CA (PEM) the broker's certificate is verified against; needs an `amqps://` `AMQP_URL`. */
  AMQP_TLS_CA_FILE: z.preprocess((value) => (value === '' ? undefined : value), z.string().min(1).optional()),
  BUS_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9_-]{0,40}$/, 'Lower-case letters, digits, _ and -')
    .default(''),
  /**
   * The broker user of every service, `{service}` standing for its name (`{service}`, or
   * `mkt_<run>_{service}`): set, a consumer takes an event only when the broker-checked AMQP
   * `user-id` is its owner's user (docs/rabbitmq-queues.md, "Who may publish what"). Unset: every
   * service shares one broker user and only the event's `source` is checked.
   */
  BUS_PUBLISHER_USERS: z
    .string()
    .regex(/^[A-Za-z0-9_.-]*\{service\}[A-Za-z0-9_.-]*$/, 'A user name with {service} in it, e.g. {service}')
    .optional(),
  /**
   * Where access tokens' keys come from: the gateway's JWKS (`JWT_JWKS_URL`, keys by `kid`, so
   * the gateway's signing key rotates without a restart), else the one `JWT_PUBLIC_KEY`. One of
   * them is required by every service that verifies tokens (`accessKeysFrom`).
   */
  JWT_PUBLIC_KEY: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z
      .string()
      .min(1)
      .transform((value) => pemFromEnv(value))
      .optional(),
  ),
  JWT_JWKS_URL: z.preprocess((value) => (value === '' ? undefined : value), z.string().url().optional()),
  /** How long a key served by the JWKS is used before the JWKS is asked again (a retired key is refused after it). */
  JWT_JWKS_CACHE_SECONDS: z.coerce.number().int().min(1).max(3600).default(300),
  /** JWKS fetches per minute at most (a token with an unknown `kid` costs one). */
  JWT_JWKS_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).max(600).default(10),
  /** While the JWKS cannot be fetched, keys it served within this long still verify. */
  JWT_JWKS_STALE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(900),
  REF_PREFIX: ReferencePrefix.default('MKT'),
  BODY_LIMIT: z.string().default('1mb'),
  /** SIGTERM to exit, grace included: a stuck step cannot keep the process past it. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(25_000),
  /**
   * After SIGTERM `/readyz` answers 503 at once while requests are still served this long (the
   * load balancer takes the instance out meanwhile), then the drain begins. Unset: 5000 in
   * production, 1000 elsewhere (`npm start`'s Ctrl-C, the tests).
   */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(120_000).optional(),
});

/** `SHUTDOWN_GRACE_MS` as configured, or its default for the environment. */
export function shutdownGraceMs(config: { NODE_ENV?: string; SHUTDOWN_GRACE_MS?: number }): number {
  return config.SHUTDOWN_GRACE_MS ?? (config.NODE_ENV === 'production' ? 5_000 : 1_000);
}

/** PEM keys arrive in env vars with literal "\n" often; turn them back into new lines. */
export function pemFromEnv(value: string): string {
  return value.includes('\\n') ? value.replace(/\\n/g, '\n') : value;
}

/**
 * The CA certificates (PEM) of a `*_TLS_CA_FILE` variable, read at start: a file that is missing,
 * unreadable or holds no certificate stops the start with the variable and the path named.
 */
export function readCaFile(variable: string, path: string): Buffer {
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (err) {
    throw new Error(`${variable}: cannot read the CA file ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`${variable}: ${path} holds no PEM certificate`);
  return pem;
}

/**
 * Parses the environment with a service's schema. On a bad value it throws with one line per
 * key (never the values: they may be secrets), so the process refuses to start.
 */
export function parseConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): Readonly<z.infer<S>> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return Object.freeze(result.data) as Readonly<z.infer<S>>;
}

/** BaseEnv with the service's default port. */
export function serviceEnv(defaultPort: number) {
  return BaseEnv.extend({ PORT: z.coerce.number().int().min(0).max(65535).default(defaultPort) });
}
