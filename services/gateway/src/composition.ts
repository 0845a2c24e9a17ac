import { periodicJob, WindowedCounter, type Logger, type OutboxRelay, type RunOptions } from '@mkt/kit';
import { createApp } from './app';
import type { GatewayConfig } from './config';
import { LoginAccount, LoginAttempt } from './db/login-attempt.model';
import { RateLimitCounter } from './db/rate-limit-counter.model';
import { RefreshToken } from './db/refresh-token.model';
import { User } from './db/user.model';
import { Identity } from './domain/identity';
import { LoginThrottle } from './domain/login-throttle';
import { PasswordHasher } from './domain/passwords';
import type { SigningKeys } from './domain/tokens';
import { metricsListener } from './http/metrics-server';

export function signingKeys(config: Readonly<GatewayConfig>): SigningKeys {
  return {
    privateKey: config.JWT_PRIVATE_KEY,
    publicKey: config.JWT_PUBLIC_KEY,
    keyId: config.JWT_KEY_ID,
    accessTtlSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
  };
}

/** How the gateway is put together (main.ts and the component tests). */
export function gatewayService(config: Readonly<GatewayConfig>, log: Logger) {
  const keys = signingKeys(config);
  const throttle = new LoginThrottle({
    maxFailuresPerAddress: config.LOGIN_MAX_FAILURES,
    windowMs: config.LOGIN_LOCK_MINUTES * 60_000,
    freeFailuresPerAccount: config.LOGIN_ACCOUNT_FREE_FAILURES,
    accountMemoryMs: config.LOGIN_ACCOUNT_MEMORY_HOURS * 3_600_000,
    maxDelayMs: config.LOGIN_DELAY_MAX_SECONDS * 1000,
  });
  const passwords = new PasswordHasher({
    memoryKib: config.PASSWORD_HASH_MEMORY_KIB,
    timeCost: config.PASSWORD_HASH_TIME_COST,
    concurrency: config.PASSWORD_HASH_CONCURRENCY,
    maxWaiting: config.PASSWORD_HASH_MAX_WAITING,
  });
  // The relay exists once the runtime does; the admin is seeded before that (its event waits
  // in the outbox for the relay's first sweep).
  let relay: OutboxRelay | undefined;
  const identity = new Identity(
    { keys, refreshTtlDays: config.REFRESH_TOKEN_TTL_DAYS, referencePrefix: config.REF_PREFIX, passwords, throttle },
    { flush: (model, target) => relay?.flush(model, target) ?? Promise.resolve() },
    log,
  );
  const options: RunOptions = {
    name: 'gateway',
    config,
    log,
    models: [User, RefreshToken, LoginAttempt, LoginAccount, RateLimitCounter],
    outboxSources: [{ name: 'users', model: User }],
    // Ready on itself alone: proxying needs no database; its own routes (login, register) fail
    // on their own while the database is away, and `/readyz` reports it.
    readinessNeedsDatabase: false,
    createApp: (runtime) => {
      relay = runtime.outbox;
      return createApp({ config, runtime, identity, keys }).listener;
    },
    // TTL indexes are not enforced everywhere (the development server): expired records are deleted hourly.
    jobs: [
      periodicJob('refresh-token-expiry', 3_600_000, () => identity.deleteExpiredRefreshTokens()),
      periodicJob('login-attempt-expiry', 3_600_000, () => throttle.deleteEnded()),
      periodicJob('rate-limit-counter-expiry', 3_600_000, () => new WindowedCounter(RateLimitCounter).deleteExpired()),
      ...(config.METRICS_PORT > 0 ? [metricsListener(config.METRICS_PORT, config.METRICS_HOST)] : []),
    ],
  };
  /** The configured admin, created before the gateway accepts any request. */
  const seedAdmin = async (): Promise<void> => {
    if (config.ADMIN_EMAIL && config.ADMIN_PASSWORD) await identity.seedAdmin(config.ADMIN_EMAIL, config.ADMIN_PASSWORD, config.ADMIN_NAME);
  };
  return { options, keys, identity, seedAdmin };
}
