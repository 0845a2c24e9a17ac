import cors from 'cors';
import express, { type Express } from 'express';
import helmet from 'helmet';
import { createService, errorHandler, type Runtime } from '@mkt/kit';
import { corsOrigins, type GatewayConfig } from './config';
import type { Identity } from './domain/identity';
import type { SigningKeys } from './domain/tokens';
import { authRouter } from './http/auth.router';
import { docsRouter } from './http/docs.router';
import { refuseUnroutable } from './http/edge';
import { limitBodySize, limitPerIp, limitPerUser, limitRegistrations, stripIdentityHeaders } from './http/protect';
import { createProxy } from './proxy/proxy';

export interface GatewayDeps {
  config: Readonly<GatewayConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness'>;
  identity: Identity;
  keys: SigningKeys;
}

/**
 * Order matters: unroutable targets are refused first (before the service plumbing, which
 * would read `http://evil/x` as `/x` and serves `/metrics`), then protection, then the proxies
 * (before any body parser, so bodies stream through untouched), then the gateway's own JSON
 * endpoints, then the 404 envelope.
 */
export function createApp({ config, runtime, identity, keys }: GatewayDeps): Express {
  const origins = corsOrigins(config);
  const service = createService({
    name: 'gateway',
    log: runtime.log,
    readiness: runtime.readiness,
    bodyLimit: `${config.BODY_LIMIT_BYTES}b`,
    beforeBodyParser: (app) => {
      app.use(helmet());
      app.use(
        cors({
          origin: origins.includes('*') ? '*' : origins,
          exposedHeaders: ['x-request-id', 'retry-after', 'ratelimit', 'ratelimit-policy'],
        }),
      );
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
      app.use('/v1/auth/register', limitRegistrations(config.RATE_LIMIT_REGISTER_IP_PER_HOUR));
      app.use('/v1/auth', authRouter(identity, keys));
      app.use(docsRouter());
    },
  });
  // X-Forwarded-For is believed for exactly TRUST_PROXY hops (default none): a client cannot
  // pick its own address for the per-IP limits.
  service.set('trust proxy', config.TRUST_PROXY);
  const edge = express();
  edge.disable('x-powered-by');
  edge.set('trust proxy', config.TRUST_PROXY);
  edge.use(refuseUnroutable());
  edge.use(service);
  edge.use(errorHandler(runtime.log));
  return edge;
}
