import { z } from 'zod';
import { parseConfig, pemFromEnv, serviceEnv } from '@mkt/kit/runtime';

const url = z.string().url();
const count = z.coerce.number().int().min(0);

/** Passwords that ship in examples and scripts: never acceptable for a production admin. */
export const KNOWN_DEFAULT_PASSWORDS = ['admin-change-me', 'change-me', 'changeme', 'admin', 'password', 'administrator'];
export const PRODUCTION_ADMIN_PASSWORD_MIN = 12;

export const GatewayEnv = serviceEnv(8080).extend({
  /**
   * The signing key set: a directory (a mounted Secret) of `<kid>.pem` RSA private keys and a
   * file `current` naming the one that signs; read again every JWT_KEYS_RELOAD_SECONDS, so a
   * key is added, promoted and retired without a restart (docs/key-rotation.md).
   */
  JWT_KEYS_DIR: z.preprocess((value) => (value === '' ? undefined : value), z.string().min(1).optional()),
  JWT_KEYS_RELOAD_SECONDS: z.coerce.number().int().min(1).max(3600).default(10),
  /** Without JWT_KEYS_DIR: the one signing key (local runs), its id JWT_KEY_ID. */
  JWT_PRIVATE_KEY: z.preprocess((value) => (value === '' ? undefined : value), z.string().min(1).transform(pemFromEnv).optional()),
  JWT_KEY_ID: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'Letters, digits, _ and - (at most 64)')
    .default('gateway-1'),
  ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(900),
  REFRESH_TOKEN_TTL_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  PASSWORD_HASH_MEMORY_KIB: z.coerce.number().int().min(1024).max(1_048_576).default(19_456),
  PASSWORD_HASH_TIME_COST: z.coerce.number().int().min(1).max(10).default(2),
  PASSWORD_HASH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  PASSWORD_HASH_MAX_WAITING: z.coerce.number().int().min(0).default(200),
  /** Failed logins of one account from one address within LOGIN_LOCK_MINUTES that lock that address out of it. */
  LOGIN_MAX_FAILURES: z.coerce.number().int().min(1).default(5),
  LOGIN_LOCK_MINUTES: z.coerce.number().int().min(1).default(15),
  /** Failed logins of one account, from every address, before each further attempt must wait. */
  LOGIN_ACCOUNT_FREE_FAILURES: z.coerce.number().int().min(1).default(10),
  /** The cap of that wait (it doubles from 1 s). */
  LOGIN_DELAY_MAX_SECONDS: z.coerce.number().int().min(1).max(3600).default(300),
  /** How long an account's failures are remembered after the last one. */
  LOGIN_ACCOUNT_MEMORY_HOURS: z.coerce.number().int().min(1).max(720).default(24),
  /**
   * Attempts from addresses that never failed on an account whose password is checked although
   * the account's new-address lane waits, per account while its failures are remembered.
   */
  LOGIN_FRESH_ADDRESS_CHECKS: z.coerce.number().int().min(0).max(1000).default(20),
  /** How long a known-device cookie (issued at each successful sign-in) stays valid. */
  LOGIN_DEVICE_COOKIE_DAYS: z.coerce.number().int().min(1).max(730).default(180),
  /**
   * The HMAC key of device cookies (≥ 32 characters); unset: a random key the gateway makes once
   * and keeps in its database (the same on every replica; independent of the signing keys, so a
   * rotation keeps the devices known).
   */
  LOGIN_DEVICE_COOKIE_SECRET: z.string().min(32).optional(),
  ADMIN_EMAIL: z.string().email().optional(),
  ADMIN_PASSWORD: z.string().min(8).optional(),
  ADMIN_NAME: z.string().min(1).default('Administrator'),
  /**
   * The address clients reach the gateway at: the `servers` URL of the OpenAPI document it serves
   * (generated clients call it). Default: this machine's gateway port.
   */
  PUBLIC_URL: url.default('http://localhost:8080').transform((value) => value.replace(/\/+$/, '')),
  WALLET_URL: url.default('http://127.0.0.1:8081'),
  CATALOG_URL: url.default('http://127.0.0.1:8082'),
  CRM_URL: url.default('http://127.0.0.1:8083'),
  CONSULTATION_URL: url.default('http://127.0.0.1:8084'),
  REVIEW_URL: url.default('http://127.0.0.1:8085'),
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
  RATE_LIMIT_IP_PER_MIN: count.default(1200),
  RATE_LIMIT_USER_PER_MIN: count.default(600),
  RATE_LIMIT_REGISTER_IP_PER_HOUR: count.default(30),
  /** `GET /consultations/{id}/slots` per client address and minute, across every replica. */
  RATE_LIMIT_SLOTS_PER_MIN: count.default(60),
  /** Proxies in front of the gateway whose X-Forwarded-For is believed (0: none, the socket's address counts). */
  TRUST_PROXY: count.max(10).default(0),
  /** Unset: `*` in development; required (and never `*`) in production. */
  CORS_ORIGINS: z.string().optional(),
  /** The gateway's own Prometheus metrics, on a port of their own (never the public one); 0: off. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  METRICS_HOST: z.string().min(1).default('0.0.0.0'),
  /**
   * Whether a client's `traceparent`/`tracestate`/`baggage` is followed. false (default): each
   * request starts a trace of the gateway's own sampling (OTEL_TRACES_SAMPLER, a ratio), linked
   * to the client's span, and the services follow the gateway; true: only behind a caller that
   * is itself ours (an edge proxy that decides sampling).
   */
  TRACE_TRUST_INCOMING_TRACEPARENT: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  /**
   * Share of successful fast reads (GET/HEAD under 400, quicker than ACCESS_LOG_SLOW_MS) written
   * to the access log; errors, aborted requests, other methods and slow answers always are. 1: all.
   */
  ACCESS_LOG_SAMPLE_RATE: z.coerce.number().min(0).max(1).default(0.01),
  /** An answer that took this long (ms) or longer is always written to the access log. */
  ACCESS_LOG_SLOW_MS: z.coerce.number().int().min(0).default(1000),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
});
export type GatewayConfig = z.infer<typeof GatewayEnv>;

/**
 * What production refuses to start with: a known or short admin password, and CORS open to
 * every origin. (Development keeps `npm start` on a laptop working without any of it.)
 */
export function productionProblems(config: GatewayConfig): string[] {
  if (config.NODE_ENV !== 'production') return [];
  const problems: string[] = [];
  const password = config.ADMIN_PASSWORD;
  if (password !== undefined) {
    if (KNOWN_DEFAULT_PASSWORDS.includes(password.toLowerCase()))
      problems.push('  ADMIN_PASSWORD: a published default password is not allowed in production');
    else if (password.length < PRODUCTION_ADMIN_PASSWORD_MIN)
      problems.push(`  ADMIN_PASSWORD: at least ${PRODUCTION_ADMIN_PASSWORD_MIN} characters in production`);
  }
  if (config.CORS_ORIGINS === undefined) problems.push('  CORS_ORIGINS: required in production (comma-separated origins)');
  else if (corsOrigins(config).includes('*')) problems.push('  CORS_ORIGINS: `*` is not allowed in production; name the origins');
  return problems;
}

/** `*` or the list of allowed origins. */
export function corsOrigins(config: Pick<GatewayConfig, 'CORS_ORIGINS'>): string[] {
  return (config.CORS_ORIGINS ?? '*')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<GatewayConfig> {
  const config = parseConfig(GatewayEnv, env);
  const problems = productionProblems(config);
  if (!config.JWT_KEYS_DIR && !config.JWT_PRIVATE_KEY)
    problems.unshift('  JWT_KEYS_DIR: required (a directory of signing keys), or JWT_PRIVATE_KEY for one key');
  if (problems.length > 0) throw new Error(`Invalid configuration:\n${problems.join('\n')}`);
  return config;
}
