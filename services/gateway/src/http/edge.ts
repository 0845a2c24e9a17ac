import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import cors from 'cors';
import type { RequestHandler } from 'express';
import { errorBody } from '@mkt/contracts/gateway';
import { CLIENT_ADDRESS_HEADER, requestIdOf } from '@mkt/kit/http';
import { NotFound, PayloadTooLarge, toHttpError } from '@mkt/kit/domain';
import { setRequestCorrelationId } from '@mkt/kit/tracing';
import { upstreamFor } from '../proxy/routes';
import type { Forward, UpstreamFailure } from '../proxy/forward';
import type { AccessLog } from './access-log';
import { addressKey, clientAddress, type TokenUsers } from './rate-limit';
import { setHeaders, type HeaderList } from './security-headers';
import { isSlotsQuery, type LimitOutcome, type SharedLimit } from './shared-limit';

export interface EdgeOptions {
  /** `['*']` or the allowed origins. */
  origins: string[];
  securityHeaders: HeaderList;
  /** Every limit is counted in the database, shared by every replica (shared-limit.ts). */
  perIp: SharedLimit | null;
  perUser: { limiter: SharedLimit; tokens: TokenUsers } | null;
  /** `GET /consultations/{id}/slots` per client address. */
  slotsPerIp: SharedLimit | null;
  trustProxyHops: number;
  bodyLimitBytes: number;
  forward: Forward;
  accessLog: AccessLog;
}

const EXPOSED = ['x-request-id', 'retry-after', 'ratelimit', 'ratelimit-policy'];
// A `.` or `..` path segment, written out or percent-encoded: such a path never reaches a
// service, where a normalizing router could resolve it to something we do not route
// (`/wallets/../metrics`).
const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(\/|$)/i;

/**
 * The gateway's front, one function per request (the hot path of every proxied call, so the
 * work is what the features need and no more — see bench/README.md):
 *
 * 1. refuse targets that are not origin-form (`GET http://evil/...`, `*`, `//host`), a `#` or a
 *    backslash, dot segments and `/metrics` with the 404 envelope; `/healthz` and `/readyz` go straight on;
 * 2. request id (the client's when sane), precomputed security headers, CORS (the `cors`
 *    package runs only when a browser sends `Origin`; otherwise its answer is precomputed too);
 * 3. inbound `x-user-*` headers removed; per-IP and per-user limits (in the database, shared
 *    by every replica: the one asynchronous step, both asked at once); body size; the slots
 *    query's own per-IP limit;
 * 4. the route is matched once: a service's prefix → streamed there; anything else → the
 *    gateway's own endpoints (next handler).
 */
export function createEdge(options: EdgeOptions): RequestHandler {
  const anyOrigin = options.origins.includes('*');
  const corsForBrowsers = cors({ origin: anyOrigin ? '*' : options.origins, exposedHeaders: EXPOSED });
  // What `cors` answers a request without `Origin`, worked out once.
  const base: OutgoingHttpHeaders = Object.fromEntries(options.securityHeaders);
  base['access-control-expose-headers'] = EXPOSED.join(',');
  if (anyOrigin) base['access-control-allow-origin'] = '*';
  else base.vary = 'Origin';

  return (req, res, next) => {
    const target = req.url;
    const query = target.indexOf('?');
    const path = query === -1 ? target : target.slice(0, query);
    if (path === '/healthz' || path === '/readyz') return next();
    // The client's address as the gateway sees it, for the request's server span, the services'
    // audit entries and their X-Forwarded-For: never the client's own header, on every answer
    // (a refused target's 404 too).
    const address = clientAddress(req, options.trustProxyHops);
    req.headers[CLIENT_ADDRESS_HEADER] = address;
    const reqId = requestIdOf(req);
    req.headers['x-request-id'] = reqId;
    (req as IncomingMessage & { id?: string }).id = reqId;
    // The correlation id (every event of the saga carries it) on the request's span.
    setRequestCorrelationId(reqId);
    const headers: OutgoingHttpHeaders = { ...base, 'x-request-id': reqId };
    if (!isRoutable(target, path)) {
      options.accessLog.track(req, res, reqId, null);
      return sendError(res, headers, new NotFound(`Route ${req.method} ${path.startsWith('/') ? path : '(absolute-form target)'}`));
    }
    for (const name in req.headers) if (name.startsWith('x-user-')) delete req.headers[name];
    const upstream = upstreamFor(path);

    const proceed = () => {
      const length = Number(req.headers['content-length'] ?? 0);
      const slots = upstream && options.slotsPerIp && isSlotsQuery(req.method, path) ? options.slotsPerIp : null;
      const decide = (refused: Error | null) => {
        if (res.destroyed) return;
        const problem = refused ?? (length > options.bodyLimitBytes ? new PayloadTooLarge(options.bodyLimitBytes) : null);
        if (problem || upstream) options.accessLog.track(req, res, reqId, upstream);
        if (problem) return sendError(res, headers, problem);
        if (upstream) return options.forward(req, res, upstream, headers, (failure) => sendFailure(res, headers, failure));
        for (const name in headers) res.setHeader(name, headers[name]!);
        next();
      };
      // A busy client's limits are decided from this replica's leases, at once; only a request
      // whose limits must ask the database waits for it.
      let limited: Error | null | Promise<Error | null>;
      try {
        limited = applyLimits(req, address, headers, options, slots);
      } catch (err) {
        limited = err as Error;
      }
      if (limited instanceof Promise) limited.then(decide, (err: unknown) => decide(err as Error));
      else decide(limited);
    };
    if (req.headers.origin === undefined) return proceed();
    setHeaders(res, options.securityHeaders);
    corsForBrowsers(req, res, proceed);
  };
}

/**
 * Origin-form targets only, and only in the one spelling every hop reads alike: no fragment
 * (`#` is never sent by a client; express would cut `/metrics#x` to `/metrics`) and no
 * backslash in the path (a hop that parses the target as a URL turns `\\` into `/`, so `/consultations/x\\slots`
 * would pass the slots limit's check here and be the slots query upstream).
 */
function isRoutable(target: string, path: string): boolean {
  return (
    target.startsWith('/') &&
    !target.startsWith('//') &&
    !target.includes('#') &&
    !path.includes('\\') &&
    !DOT_SEGMENT.test(path) &&
    path !== '/metrics' &&
    !path.startsWith('/metrics/')
  );
}

/**
 * Per-IP and per-user (a verified token's `sub`), both counted (the database asked for both at
 * once when either needs it); then, for a slots query that passed them, its own limit. The
 * headers sent are the per-user limit's when there is one (a refused slots query: the slots
 * limit's). Decided without a promise when every limit is decided from this replica's leases.
 */
function applyLimits(
  req: IncomingMessage,
  client: string,
  headers: OutgoingHttpHeaders,
  options: EdgeOptions,
  slots: SharedLimit | null,
): Error | null | Promise<Error | null> {
  const address = options.perIp || slots ? addressKey(client) : '';
  const asked: Array<LimitOutcome | Promise<LimitOutcome>> = [];
  let waiting = false;
  if (options.perIp) {
    const outcome = options.perIp.take(address);
    waiting = outcome instanceof Promise;
    asked.push(outcome);
  }
  const perUser = options.perUser;
  if (perUser && req.headers.authorization) {
    const user = perUser.tokens.userOf(req.headers.authorization);
    if (user instanceof Promise) {
      waiting = true;
      asked.push(user.then((verified) => (verified ? perUser.limiter.take(verified) : NOBODY)));
    } else if (user) {
      const outcome = perUser.limiter.take(user);
      waiting ||= outcome instanceof Promise;
      asked.push(outcome);
    }
  }
  if (waiting) return Promise.all(asked).then((outcomes) => afterUserLimits(outcomes, address, headers, slots));
  return afterUserLimits(asked as LimitOutcome[], address, headers, slots);
}

/** A request without a verified user: no per-user limit, no headers of its own. */
const NOBODY: LimitOutcome = { headers: { policy: '', value: '' }, refused: null };

function afterUserLimits(
  outcomes: LimitOutcome[],
  address: string,
  headers: OutgoingHttpHeaders,
  slots: SharedLimit | null,
): Error | null | Promise<Error | null> {
  for (const outcome of outcomes) {
    if (outcome === NOBODY) continue;
    headers['ratelimit-policy'] = outcome.headers.policy;
    headers.ratelimit = outcome.headers.value;
    if (outcome.refused) return outcome.refused;
  }
  if (!slots) return null;
  const outcome = slots.take(address);
  return outcome instanceof Promise ? outcome.then((decided) => slotsDecided(decided, headers)) : slotsDecided(outcome, headers);
}

function slotsDecided({ headers: slotHeaders, refused }: LimitOutcome, headers: OutgoingHttpHeaders): Error | null {
  if (refused) {
    headers['ratelimit-policy'] = slotHeaders.policy;
    headers.ratelimit = slotHeaders.value;
  }
  return refused;
}

function sendError(res: ServerResponse, headers: OutgoingHttpHeaders, err: Error): void {
  const mapped = toHttpError(err);
  writeJson(res, mapped.status, { ...headers, ...mapped.headers }, JSON.stringify(mapped.body));
}

function sendFailure(res: ServerResponse, headers: OutgoingHttpHeaders, [status, code, message]: UpstreamFailure): void {
  writeJson(res, status, headers, JSON.stringify(errorBody(message, [{ path: '', code, message }])));
}

function writeJson(res: ServerResponse, status: number, headers: OutgoingHttpHeaders, body: string): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
