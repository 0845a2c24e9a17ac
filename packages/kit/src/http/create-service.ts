import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import { ErrorCode, errorBody, ok } from '@mkt/contracts/core';
import { NotFound, toHttpError } from '../errors';
import type { Logger } from '../logger';
import { getMetrics, renderMetrics, traceExemplar, wantsOpenMetrics } from '../metrics';
import { endpointDispatcher, mountRoute } from './endpoints';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id';
import { setRequestCorrelationId, traceContextMiddleware } from '../tracing';

export interface ReadinessCheck {
  name: string;
  check: () => boolean | Promise<boolean>;
  /**
   * false: reported in `/readyz`'s body but never a reason for 503 (the broker: while it is
   * away the outbox keeps the events and the API goes on). Default true.
   */
  required?: boolean;
  /** The word for a failed check in the body (default `down`). */
  downAs?: string;
}

export interface ServiceOptions {
  name: string;
  log: Logger;
  /** What `/readyz` asks: the process not draining and the database; the broker is only reported. */
  readiness: ReadinessCheck[];
  /**
   * Mounts the service's routes: `mountEndpoints(app, ...)` from the contracts' tables (each
   * entry brings its own body parser), plus any route outside the tables (`app.get`, after the
   * JSON body parser).
   */
  routes: (app: Express) => void;
  bodyLimit?: string;
}

/**
 * The express app every service shares: request id, one log line per request (secrets
 * redacted), metrics, health, the endpoints mounted from the contracts' tables (kit's own
 * matcher, `endpoints.ts`), a bounded JSON parser, any other routes, then a 404 and one error
 * middleware that answers every failure with the envelope. A method not served on a path that
 * is served answers 405 with `Allow`, also where a parameter route of another method would match
 * it (a literal segment wins); OPTIONS answers 204 with `Allow`. Routing is case-sensitive and
 * strict: `/WALLETS/...` is a 404, not the wallet.
 */
export function createService(options: ServiceOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  // Before the first route: express reads these when it makes the app's router.
  app.enable('case sensitive routing');
  app.enable('strict routing');
  app.set('trust proxy', 'loopback, linklocal, uniquelocal');
  // An incoming `traceparent` is continued (tracing off; with it on, the http instrumentation).
  app.use(traceContextMiddleware());
  app.use(requestContext(options.log));
  app.use(recordDuration());
  const json = express.json({ limit: options.bodyLimit ?? '1mb', strict: true, type: ['application/json', 'application/*+json'] });
  // Every route of the app on kit's matcher: the table's entries (mounted by `options.routes`
  // below) and the app's own routes (`mountRoute`); read per request.
  app.use(endpointDispatcher(app, json));
  mountHealth(app, options.readiness);
  app.use(json);
  options.routes(app);
  app.use(notFound());
  app.use(errorHandler(options.log));
  return app;
}

function requestContext(log: Logger): RequestHandler {
  return pinoHttp({
    logger: log,
    genReqId: (req, res) => {
      const id = requestIdOf(req);
      res.setHeader(REQUEST_ID_HEADER, id);
      // The correlation id events carry, on the request's span.
      setRequestCorrelationId(id);
      return id;
    },
    customAttributeKeys: { reqId: 'reqId' },
    // Handlers may add fields to the request's log line (the gateway names the upstream).
    customProps: (_req, res) => (res as { locals?: { logFields?: object } }).locals?.logFields ?? {},
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' || req.url === '/metrics' },
    serializers: {
      req: (req: { method: string; url: string; id: unknown }) => ({ method: req.method, url: req.url, id: req.id }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
}

function recordDuration(): RequestHandler {
  const { httpDuration } = getMetrics();
  return (req, res, next) => {
    const end = httpDuration.startTimer();
    const routeLabel = trackRouteLabel(req);
    res.on('finish', () => {
      (end as (labels: object, exemplar: object) => void)(
        { method: req.method, route: routeLabel(), status: String(res.statusCode) },
        traceExemplar(),
      );
    });
    next();
  };
}

/**
 * The label of the route that handles `req` (`/v1/auth/register`), fixed when the router picks
 * the route. Read at `finish` it would be wrong for errors: an error leaving a mounted router
 * restores `req.baseUrl` before the app's error handler answers, so the 409 of
 * `/v1/auth/register` was labelled `/register` beside its 200's full path.
 */
function trackRouteLabel(req: Request): () => string {
  let label = 'unmatched';
  let route: unknown = req.route;
  Object.defineProperty(req, 'route', {
    configurable: true,
    enumerable: true,
    get: () => route,
    set: (value: { path?: unknown } | undefined) => {
      route = value;
      if (value?.path !== undefined) label = `${req.baseUrl}${String(value.path)}`;
    },
  });
  return () => label;
}

/** `/healthz`: the process answers. `/readyz`: every required check is up (see `ReadinessCheck`). */
export function mountHealth(app: Express, checks: ReadinessCheck[]): void {
  mountRoute(app, 'get', '/healthz', (_req, res) => {
    res.json(ok({ status: 'ok' }));
  });
  mountRoute(app, 'get', '/readyz', async (_req, res) => {
    const results = await Promise.all(
      checks.map(async ({ name, check, required = true, downAs = 'down' }) => {
        const up = await Promise.resolve(check()).catch(() => false);
        return { name, required, up, state: up ? 'up' : downAs };
      }),
    );
    const states = Object.fromEntries(results.map((r) => [r.name, r.state]));
    const failing = results.filter((result) => result.required && !result.up);
    if (failing.length === 0) {
      res.json(ok({ status: 'ready', checks: states }));
      return;
    }
    const errors = failing.map(({ name, state }) => ({
      path: name,
      code: ErrorCode.unavailable,
      message: state === 'down' ? `${name} is not reachable` : `${name} is ${state}`,
    }));
    res.status(503).json({ ...errorBody('Not ready', errors), checks: states });
  });
  mountRoute(app, 'get', '/metrics', async (req, res) => {
    const { contentType, text } = await renderMetrics(wantsOpenMetrics(req.get('accept')));
    res.type(contentType).send(text);
  });
}

function notFound(): RequestHandler {
  return (req, _res, next) => next(new NotFound(`Route ${req.method} ${req.path}`));
}

export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const mapped = toHttpError(err);
    if (mapped.internal) (req.log ?? log).error({ err }, 'request failed');
    res.set(mapped.headers).status(mapped.status).json(mapped.body);
  };
}
