import {
  createDatabase,
  createRuntime,
  isDatabaseReady,
  periodicJob,
  WindowedCounter,
  type Logger,
  type ServiceDefinition,
} from '@mkt/kit';
import { createApp } from './app';
import { Identity } from './application/identity';
import { LoginThrottle } from './application/login-throttle';
import type { GatewayConfig } from './config';
import { PasswordHasher } from './credentials/passwords';
import type { SigningKeys } from './credentials/tokens';
import { LoginThrottleRepository } from './db/login-throttle.repository';
import { deviceCookieSecret } from './credentials/device-cookie';
import { gatewayModels } from './db/models';
import { gatewayMigrations } from './migrations';
import { RefreshTokenRepository } from './db/refresh-token.repository';
import { UserRepository } from './db/user.repository';
import { metricsListener } from './http/metrics-server';

export function signingKeys(config: Readonly<GatewayConfig>): SigningKeys {
  return {
    privateKey: config.JWT_PRIVATE_KEY,
    publicKey: config.JWT_PUBLIC_KEY,
    keyId: config.JWT_KEY_ID,
    accessTtlSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
  };
}

/**
 * How the gateway is put together (main.ts and the component tests): every part built here, at
 * once — its own database handle and the models bound to it, the runtime, repositories, the
 * login throttle, password hashing, identity, the shared limits' counter, the app and the jobs.
 * Nothing connects until the definition is started.
 */
export function gatewayService(config: Readonly<GatewayConfig>, log: Logger) {
  const db = createDatabase();
  const models = gatewayModels(db);
  const runtime = createRuntime({
    name: 'gateway',
    config,
    log,
    db,
    outboxSources: [{ name: 'users', model: models.User }],
    // Ready on itself alone: proxying needs no database; its own routes (login, register) fail
    // on their own while the database is away, and `/readyz` reports it.
    readinessNeedsDatabase: false,
  });
  const keys = signingKeys(config);
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
  const devices = {
    secret: deviceCookieSecret(config.LOGIN_DEVICE_COOKIE_SECRET, config.JWT_PRIVATE_KEY),
    maxAgeMs: config.LOGIN_DEVICE_COOKIE_DAYS * 86_400_000,
  };
  const passwords = new PasswordHasher({
    memoryKib: config.PASSWORD_HASH_MEMORY_KIB,
    timeCost: config.PASSWORD_HASH_TIME_COST,
    concurrency: config.PASSWORD_HASH_CONCURRENCY,
    maxWaiting: config.PASSWORD_HASH_MAX_WAITING,
  });
  const identity = new Identity(
    { keys, refreshTtlDays: config.REFRESH_TOKEN_TTL_DAYS, referencePrefix: config.REF_PREFIX, passwords, throttle, devices },
    { users: new UserRepository(models.User), refreshTokens: new RefreshTokenRepository(models.RefreshToken) },
    // The admin is seeded before the runtime starts: its event waits in the outbox for the relay's first sweep.
    { flush: (userId) => runtime.outbox.flush(models.User, userId) },
    log,
  );
  const counter = new WindowedCounter(models.RateLimitCounter);
  const app = createApp({ config, runtime, identity, keys, counter, devices, databaseReady: () => isDatabaseReady(db) });
  /** The configured admin, created before the gateway accepts any request. */
  const seedAdmin = async (): Promise<void> => {
    if (config.ADMIN_EMAIL && config.ADMIN_PASSWORD) await identity.seedAdmin(config.ADMIN_EMAIL, config.ADMIN_PASSWORD, config.ADMIN_NAME);
  };
  const definition: ServiceDefinition = {
    runtime,
    config,
    models: Object.values(models),
    migrations: gatewayMigrations,
    app: app.listener,
    // The admin exists before the port opens: no request can race its creation.
    beforeListen: seedAdmin,
    // TTL indexes are not enforced everywhere (the development server): expired records are deleted hourly.
    jobs: [
      periodicJob('refresh-token-expiry', 3_600_000, () => identity.deleteExpiredRefreshTokens()),
      periodicJob('login-attempt-expiry', 3_600_000, () => throttle.deleteEnded()),
      periodicJob('rate-limit-counter-expiry', 3_600_000, () => counter.deleteExpired()),
      ...(config.METRICS_PORT > 0 ? [metricsListener(config.METRICS_PORT, config.METRICS_HOST)] : []),
    ],
  };
  return { definition, parts: { models, keys, identity, throttle, passwords, service: app.service } };
}
