import { createDatabase, isDatabaseReady, WindowedCounter } from '@mkt/kit/db';
import { createRuntime, periodicJob, type ServiceDefinition } from '@mkt/kit/runtime';
import type { Logger } from '@mkt/kit/logger';
import { createApp } from './app';
import { AuditLog } from './application/audit-log.use-cases';
import { Identity } from './application/identity.use-cases';
import { LoginThrottle } from './application/login-throttle.use-cases';
import type { GatewayConfig } from './config';
import { PasswordHasher } from './credentials/passwords';
import type { SigningKeys } from './credentials/tokens';
import { readKeyDirectory, singleKeySet, SigningKeySet } from './credentials/key-set';
import { SecretRepository } from './db/secret.repository';
import { LoginThrottleRepository } from './db/login-throttle.repository';
import { deviceCookieSecret, type DeviceCookieSettings } from './credentials/device-cookie';
import { gatewayModels } from './db/models';
import { gatewayMigrations } from './migrations';
import { RefreshTokenRepository } from './db/refresh-token.repository';
import { UserRepository } from './db/user.repository';
import { AuditEntryRepository } from './db/audit-entry.repository';
import { auditConsumer } from './events/audit.consumer';
import { metricsListener } from './http/metrics-server';

/**
 * The signing keys: the directory JWT_KEYS_DIR (read at start — a set that does not read stops
 * the start — and again every JWT_KEYS_RELOAD_SECONDS), else the one JWT_PRIVATE_KEY.
 */
export function signingKeys(config: Readonly<GatewayConfig>, log: Logger): SigningKeys {
  const dir = config.JWT_KEYS_DIR;
  const set = dir
    ? new SigningKeySet(readKeyDirectory(dir), log, { read: () => readKeyDirectory(dir), everyMs: config.JWT_KEYS_RELOAD_SECONDS * 1000 })
    : new SigningKeySet(singleKeySet(config.JWT_PRIVATE_KEY!, config.JWT_KEY_ID), log);
  return { set, accessTtlSeconds: config.ACCESS_TOKEN_TTL_SECONDS };
}

/**
 * How the gateway is put together (main.ts and the component tests): every part built here, at
 * once — its own database handle and the models bound to it, the runtime, repositories, the
 * login throttle, password hashing, identity, the audit log and its consumer, the shared limits'
 * counter, the app and the jobs.
 * Nothing connects until the definition is started.
 */
export function gatewayService(config: Readonly<GatewayConfig>, log: Logger) {
  const db = createDatabase();
  const models = gatewayModels(db);
  const keys = signingKeys(config, log);
  const runtime = createRuntime({
    name: 'gateway',
    config,
    log,
    db,
    outboxSources: [{ name: 'users', model: models.User }],
    // Ready on itself alone: proxying needs no database; its own routes (login, register) fail
    // on their own while the database is away, and `/readyz` reports it.
    readinessNeedsDatabase: false,
    // Its own tokens are checked against its own key set (never its JWKS over HTTP); the runtime
    // re-reads the set in the background while it runs.
    accessKeys: keys.set,
  });
  const throttle = new LoginThrottle(
    {
      maxFailuresPerAddress: config.LOGIN_MAX_FAILURES,
      windowMs: config.LOGIN_LOCK_MINUTES * 60_000,
      freeFailuresPerAccount: config.LOGIN_ACCOUNT_FREE_FAILURES,
      accountMemoryMs: config.LOGIN_ACCOUNT_MEMORY_HOURS * 3_600_000,
      maxDelayMs: config.LOGIN_DELAY_MAX_SECONDS * 1000,
      freshAddressChecks: config.LOGIN_FRESH_ADDRESS_CHECKS,
    },
    new LoginThrottleRepository(models.LoginAttempt, models.LoginAccount),
    log,
  );
  // The secret is read (or made) before the port opens (`beforeListen`); until then no sign-in is served.
  const devices: DeviceCookieSettings = { secret: Buffer.alloc(0), maxAgeMs: config.LOGIN_DEVICE_COOKIE_DAYS * 86_400_000 };
  const passwords = new PasswordHasher({
    memoryKib: config.PASSWORD_HASH_MEMORY_KIB,
    timeCost: config.PASSWORD_HASH_TIME_COST,
    concurrency: config.PASSWORD_HASH_CONCURRENCY,
    maxWaiting: config.PASSWORD_HASH_MAX_WAITING,
  });
  const identity = new Identity(
    { keys, refreshTtlDays: config.REFRESH_TOKEN_TTL_DAYS, referencePrefix: config.REF_PREFIX, passwords, throttle, devices },
    { users: new UserRepository(models.User), refreshTokens: new RefreshTokenRepository(models.RefreshToken) },
    log,
  );
  const counter = new WindowedCounter(models.RateLimitCounter);
  const audit = new AuditLog(new AuditEntryRepository(models), log);
  const app = createApp({ config, runtime, identity, audit, keys, counter, devices, databaseReady: () => isDatabaseReady(db) });
  /** The device cookies' key, and the configured admin, before the gateway accepts any request. */
  const seedAdmin = async (): Promise<void> => {
    devices.secret = await deviceCookieSecret(config.LOGIN_DEVICE_COOKIE_SECRET, new SecretRepository(models.GatewaySecret));
    if (config.ADMIN_EMAIL && config.ADMIN_PASSWORD) await identity.seedAdmin(config.ADMIN_EMAIL, config.ADMIN_PASSWORD, config.ADMIN_NAME);
  };
  const definition: ServiceDefinition = {
    runtime,
    config,
    models: Object.values(models),
    migrations: gatewayMigrations,
    app: app.listener,
    consumers: [auditConsumer(audit)],
    // The admin exists before the port opens: no request can race its creation.
    beforeListen: seedAdmin,
    // The edge decides sampling: a client's trace headers are followed only when trusted.
    distrustIncomingTraceContext: !config.TRACE_TRUST_INCOMING_TRACEPARENT,
    // TTL indexes are not enforced everywhere (the development server): expired records are deleted hourly.
    jobs: [
      periodicJob('refresh-token-expiry', 3_600_000, () => identity.deleteExpiredRefreshTokens()),
      periodicJob('login-attempt-expiry', 3_600_000, () => throttle.deleteEnded()),
      periodicJob('rate-limit-counter-expiry', 3_600_000, () => counter.deleteExpired()),
      ...(config.METRICS_PORT > 0 ? [metricsListener(config.METRICS_PORT, config.METRICS_HOST)] : []),
    ],
  };
  return { definition, parts: { models, keys, identity, throttle, passwords, audit, service: app.service } };
}
