import type { RequestListener } from 'node:http';
import type { Express, Request, RequestHandler, Response } from 'express';
import { ENDPOINTS, OPERATIONS } from '@mkt/contracts/gateway';
import { createService, mountEndpoints, operationHandlers } from '@mkt/kit/http';
import { bindToActiveContext, traceContextMiddleware, traceRequests } from '@mkt/kit/tracing';
import type { Runtime } from '@mkt/kit/runtime';
import type { WindowedCounter } from '@mkt/kit/db';
import { corsOrigins, type GatewayConfig } from './config';
import type { AuditLog } from './application/audit-log.use-cases';
import type { Identity } from './application/identity.use-cases';
import type { DeviceCookieSettings } from './credentials/device-cookie';
import type { SigningKeys } from './credentials/tokens';
import { AccessLog } from './http/access-log';
import { auditHandlers } from './http/audit.handlers';
import { authHandlers } from './http/auth.handlers';
import { mountDocs } from './http/docs';
import { createEdge } from './http/edge';
import { limitRegistrations, TokenUsers } from './http/rate-limit';
import { securityHeaders } from './http/security-headers';
import { SharedLimit, type SharedLimitOptions } from './http/shared-limit';
import { createForward } from './proxy/forward';

export interface GatewayDeps {
  config: Readonly<GatewayConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness'>;
  identity: Identity;
  /** The audit log of admin actions (its read and export entries). */
  audit: AuditLog;
  keys: SigningKeys;
  /** The shared counters of every rate limit (the gateway's database). */
  counter: WindowedCounter;
  /** The known-device cookie's key and lifetime (sign-ins read and set it). */
  devices: DeviceCookieSettings;
  /** Whether the gateway's database is connected (the limits let requests through when not). */
  databaseReady: () => boolean;
}

/** The gateway's HTTP handler, and the app of its own endpoints behind the edge. */
export interface GatewayApp {
  /** What the server calls: the edge, then (what it does not proxy) `service`. */
  listener: RequestListener;
  service: Express;
}

/**
 * The edge (http/edge.ts) sees every request first: refusals, protection, and the proxy, whose
 * requests never enter the service plumbing below. What is not proxied goes on to the
 * gateway's own endpoints (health, the auth entries of the endpoint table, docs) in the service
 * app every service shares, with its JSON parser, request log and error envelope.
 */
export function createApp({ config, runtime, identity, audit, keys, counter, devices, databaseReady }: GatewayDeps): GatewayApp {
  // Every limit is counted in the gateway's database, so N replicas enforce one budget. When the
  // database cannot be asked, the limits in front of proxied traffic let requests through (the
  // services behind have limits and databases of their own; refusing everything would make a
  // hiccup of the gateway's database an outage of every route), while registration, whose work
  // needs the database anyway, is refused (503). The login throttle is the identity's
  // (application/login-throttle.use-cases.ts) and fails closed the same way: no attempt is checked uncounted.
  const limit = (
    name: string,
    perWindow: number,
    window: SharedLimitOptions['window'],
    whenUnavailable: SharedLimitOptions['whenUnavailable'],
  ) => (perWindow > 0 ? new SharedLimit({ name, limit: perWindow, window, whenUnavailable }, counter, runtime.log, databaseReady) : null);
  const perUser = limit('user', config.RATE_LIMIT_USER_PER_MIN, 'minute', 'allow');
  const service = createService({
    name: 'gateway',
    log: runtime.log,
    readiness: runtime.readiness,
    bodyLimit: `${config.BODY_LIMIT_BYTES}b`,
    routes: (app) => {
      const registrations = limitRegistrations(
        limit('register', config.RATE_LIMIT_REGISTER_IP_PER_HOUR, 'hour', 'refuse'),
        config.TRUST_PROXY,
      );
      mountEndpoints(app, {
        service: 'gateway',
        tables: [ENDPOINTS],
        publicKey: keys.set,
        handlers: operationHandlers(OPERATIONS, 'gateway', {
          ...authHandlers(identity, keys, config.TRUST_PROXY, registrations, {
            settings: devices,
            secureCookies: config.NODE_ENV === 'production',
          }),
          ...auditHandlers(audit),
        }),
      });
      mountDocs(app, config.PUBLIC_URL);
    },
  });
  service.set('trust proxy', config.TRUST_PROXY);
  const listener = withEdge(
    service,
    createEdge({
      origins: corsOrigins(config),
      securityHeaders: securityHeaders(),
      perIp: limit('ip', config.RATE_LIMIT_IP_PER_MIN, 'minute', 'allow'),
      perUser: perUser ? { limiter: perUser, tokens: new TokenUsers(keys.set) } : null,
      slotsPerIp: limit('slots', config.RATE_LIMIT_SLOTS_PER_MIN, 'minute', 'allow'),
      trustProxyHops: config.TRUST_PROXY,
      bodyLimitBytes: config.BODY_LIMIT_BYTES,
      forward: createForward({
        log: runtime.log,
        trustProxyHops: config.TRUST_PROXY,
        timeoutMs: config.UPSTREAM_TIMEOUT_MS,
        targets: {
          wallet: config.WALLET_URL,
          catalog: config.CATALOG_URL,
          crm: config.CRM_URL,
          consultation: config.CONSULTATION_URL,
          review: config.REVIEW_URL,
        },
      }),
      accessLog: new AccessLog(runtime.log, config.ACCESS_LOG_SAMPLE_RATE, config.ACCESS_LOG_SLOW_MS),
    }),
  );
  return { listener, service };
}

/**
 * Puts `edge` in front of an express app without express's own request handling: a proxied
 * request costs one function call here, not express's request/response set-up and router
 * (about a tenth of the gateway's CPU in the profile, bench/README.md). Whatever `edge` passes
 * on is handed to the app as a server would hand it (an express app is a request listener).
 */
function withEdge(app: Express, edge: RequestHandler): RequestListener {
  // Tracing off: an incoming traceparent is the context of the edge's work too (its log lines).
  const continueTrace = traceContextMiddleware();
  // The gateway's own endpoints read bodies and await the database: their request's listeners
  // run in its trace. A proxied request needs no such binding (the proxy keeps what it needs).
  const own = (req: Request, res: Response) => {
    bindToActiveContext(req, res);
    void app(req, res);
  };
  // Tracing on: the request's server span, started after the sampler's decision.
  return traceRequests((req, res) => {
    continueTrace(req as Request, res as Response, () => edge(req as Request, res as Response, () => own(req as Request, res as Response)));
  });
}
