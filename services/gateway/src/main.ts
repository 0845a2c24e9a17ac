import { createLogger, runService } from '@mkt/kit';
import { loadConfig } from './config';
import { RefreshToken } from './db/refresh-token.model';
import { User } from './db/user.model';
import { Identity } from './domain/identity';
import { createApp } from './app';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger('gateway', config.LOG_LEVEL);
  const keys = {
    privateKey: config.JWT_PRIVATE_KEY,
    publicKey: config.JWT_PUBLIC_KEY,
    keyId: config.JWT_KEY_ID,
    accessTtlSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
  };
  let identity: Identity | undefined;
  await runService({
    name: 'gateway',
    config,
    log,
    models: [User, RefreshToken],
    outboxSources: [{ name: 'users', model: User }],
    createApp: (runtime) => {
      identity = new Identity(
        { keys, refreshTtlDays: config.REFRESH_TOKEN_TTL_DAYS, bcryptRounds: config.BCRYPT_ROUNDS, referencePrefix: config.REF_PREFIX },
        runtime.outbox,
        log,
      );
      return createApp({ config, runtime, identity, keys });
    },
    jobs: [
      () => {
        const timer = setInterval(() => void identity?.deleteExpiredRefreshTokens().catch(() => undefined), 3_600_000);
        timer.unref();
        return async () => clearInterval(timer);
      },
    ],
  });
  if (config.ADMIN_EMAIL && config.ADMIN_PASSWORD) await identity!.seedAdmin(config.ADMIN_EMAIL, config.ADMIN_PASSWORD, config.ADMIN_NAME);
}

main().catch((err: unknown) => {
  createLogger('gateway').fatal({ err }, 'could not start');
  process.exit(1);
});
