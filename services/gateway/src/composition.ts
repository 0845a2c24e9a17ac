import { periodicJob, type Logger, type RunOptions } from '@mkt/kit';
import { createApp } from './app';
import type { GatewayConfig } from './config';
import { RefreshToken } from './db/refresh-token.model';
import { User } from './db/user.model';
import { Identity } from './domain/identity';
import type { SigningKeys } from './domain/tokens';

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
  let identity: Identity | undefined;
  const options: RunOptions = {
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
    // TTL indexes are not enforced everywhere (the development server): expired refresh tokens are deleted hourly.
    jobs: [periodicJob('refresh-token-expiry', 3_600_000, () => identity!.deleteExpiredRefreshTokens())],
  };
  return { options, keys, identity: () => identity! };
}
