import cors from 'cors';
import type { Express } from 'express';
import helmet from 'helmet';
import { createService, type Runtime } from '@mkt/kit';
import type { GatewayConfig } from './config';
import type { Identity } from './domain/identity';
import type { SigningKeys } from './domain/tokens';
import { authRouter } from './http/auth.router';
import { docsRouter } from './http/docs.router';
import { limitBodySize, limitPerIp, limitPerUser, stripIdentityHeaders } from './http/protect';
import { createProxy } from './proxy/proxy';

export interface GatewayDeps {
  config: Readonly<GatewayConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness'>;
  identity: Identity;
  keys: SigningKeys;
}

/**
 * Order matters: protection first, then the proxies (before any body parser, so bodies stream
 * through untouched), then the gateway's own JSON endpoints, then the 404 envelope.
 */
export function createApp({ config, runtime, identity, keys }: GatewayDeps): Express {
  const origins = config.CORS_ORIGINS === '*' ? '*' : config.CORS_ORIGINS.split(',').map((origin) => origin.trim());
  return createService({
    name: 'gateway',
    log: runtime.log,
    readiness: runtime.readiness,
    bodyLimit: `${config.BODY_LIMIT_BYTES}b`,
    beforeBodyParser: (app) => {
      app.use(helmet());
      app.use(cors({ origin: origins, exposedHeaders: ['x-request-id', 'retry-after', 'ratelimit', 'ratelimit-policy'] }));
      app.use(stripIdentityHeaders());
      app.use(limitPerIp(config.RATE_LIMIT_IP_PER_MIN));
      app.use(limitPerUser(config.RATE_LIMIT_USER_PER_MIN, keys.publicKey));
      app.use(limitBodySize(config.BODY_LIMIT_BYTES));
      app.use(
        createProxy({
          log: runtime.log,
          timeoutMs: config.UPSTREAM_TIMEOUT_MS,
          targets: {
            wallet: config.WALLET_URL,
            catalog: config.CATALOG_URL,
            crm: config.CRM_URL,
            consultation: config.CONSULTATION_URL,
            review: config.REVIEW_URL,
          },
        }),
      );
    },
    routes: (app) => {
      app.use('/v1/auth', authRouter(identity, keys));
      app.use(docsRouter());
    },
  });
}
