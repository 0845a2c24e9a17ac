import http, { type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { createProxyMiddleware, proxyEventsPlugin, type RequestHandler } from 'http-proxy-middleware';
import { ErrorCode } from '@mkt/contracts';
import type { Logger } from '@mkt/kit';
import type { Upstream } from './routes';

export interface ForwardOptions {
  targets: Record<Upstream, string>;
  timeoutMs: number;
  log: Logger;
}

/** Answers the gateway writes itself when an upstream fails: status, code, message. */
export type UpstreamFailure = readonly [number, string, string];

/** Sends one request upstream and its answer back; `headers` go on the answer unless the upstream sets the same. */
export type Forward = (
  req: IncomingMessage,
  res: ServerResponse,
  upstream: Upstream,
  headers: OutgoingHttpHeaders,
  fail: (failure: UpstreamFailure) => void,
) => void;

// RFC 9110 §9.2.2: may be sent again when the connection failed before an answer.
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
// Hop-by-hop: they describe one connection, never the next one (a client's `Connection: close`
// must not close the pooled socket to the service).
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade', 'proxy-authorization'];

/** An idempotent method (RFC 9110 §9.2.2) whose request has no body to stream again. */
function isResendable(req: IncomingMessage): boolean {
  if (!IDEMPOTENT.has(req.method ?? '')) return false;
  if (req.headers['transfer-encoding'] !== undefined) return false;
  const length = req.headers['content-length'];
  return length === undefined || Number(length) === 0;
}

/** What one proxied exchange carries from the edge to the proxy's events. */
interface Exchange {
  upstream: Upstream;
  headers: OutgoingHttpHeaders;
  fail: (failure: UpstreamFailure) => void;
  timedOut: boolean;
  retried: boolean;
}
const EXCHANGE = Symbol('gateway.exchange');
type ProxiedRequest = IncomingMessage & { [EXCHANGE]?: Exchange };

/**
 * The proxy: http-proxy-middleware, one instance per service, streaming bodies untouched on
 * keep-alive sockets whose idle timeout (30 s) is below the services' keepAliveTimeout (65 s),
 * so a socket the service is closing is never reused. `X-Forwarded-For/-Port/-Proto/-Host` are
 * appended (`xfwd`); the client's connection headers are not passed on. Only the proxy-events
 * plugin is kept (no per-request logger plugin, no default error page): failures answer with
 * the error envelope — refused/unresolvable → 503, broken → 502, slower than `timeoutMs` → 504.
 */
export function createForward({ targets, timeoutMs, log }: ForwardOptions): Forward {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512, maxFreeSockets: 256, timeout: 30_000, scheduling: 'lifo' });
  const on = {
    proxyReq: (proxyReq: ClientRequest, req: ProxiedRequest, res: ServerResponse) => {
      const exchange = req[EXCHANGE]!;
      for (const name of HOP_BY_HOP) if (req.headers[name] !== undefined) proxyReq.removeHeader(name);
      proxyReq.setTimeout(timeoutMs, () => {
        exchange.timedOut = true;
        proxyReq.destroy(new Error(`upstream ${exchange.upstream} did not answer within ${timeoutMs} ms`));
      });
      // The client went away before the answer was complete: stop asking the service.
      res.once('close', () => {
        if (!res.writableFinished) proxyReq.destroy();
      });
    },
    // Emitted before http-proxy copies the answer's headers: the service's connection headers
    // go (http-proxy then answers the client's own), the gateway's headers join the rest.
    proxyRes: (proxyRes: IncomingMessage, req: ProxiedRequest) => {
      const { headers } = req[EXCHANGE]!;
      for (const name of HOP_BY_HOP) delete proxyRes.headers[name];
      for (const name in headers) proxyRes.headers[name] ??= headers[name] as string;
    },
    error: (err: Error & { code?: string }, req: ProxiedRequest, res: ServerResponse | unknown) => {
      const exchange = req[EXCHANGE];
      if (!exchange || !(res instanceof http.ServerResponse)) return;
      const { upstream } = exchange;
      // The connection was reset before any answer: a pooled socket the service closed just as
      // we sent on it (its idle timeout won, or it is shutting down), or a new one still in its
      // listen queue when it stopped listening. An idempotent request without a body goes
      // again, once: a body was streamed from the client and is gone, so a resent PUT would
      // leave the service waiting for bytes that never come (a 504 after the timeout). EPIPE is
      // the same race seen while writing the request rather than reading the answer.
      if ((err.code === 'ECONNRESET' || err.code === 'EPIPE') && !exchange.retried && !res.headersSent && isResendable(req)) {
        exchange.retried = true;
        send(req, res, exchange);
        return;
      }
      const failure: UpstreamFailure = exchange.timedOut
        ? [504, ErrorCode.gatewayTimeout, `The ${upstream} service did not answer in time`]
        : UNAVAILABLE_CODES.has(err.code ?? '')
          ? [503, ErrorCode.unavailable, `The ${upstream} service is unavailable`]
          : [502, ErrorCode.badGateway, `The ${upstream} service failed to answer`];
      if (res.writableEnded || res.destroyed) return;
      log.warn({ upstream, err, status: failure[0], reqId: exchange.headers['x-request-id'] }, 'upstream failure');
      if (res.headersSent) res.destroy();
      else exchange.fail(failure);
    },
  };
  const proxies = Object.fromEntries(
    Object.entries(targets).map(([upstream, target]) => [
      upstream,
      createProxyMiddleware<IncomingMessage, ServerResponse>({
        target,
        agent,
        xfwd: true,
        ejectPlugins: true,
        plugins: [proxyEventsPlugin],
        on: on as never,
      }),
    ]),
  ) as Record<Upstream, RequestHandler<IncomingMessage, ServerResponse>>;

  function send(req: ProxiedRequest, res: ServerResponse, exchange: Exchange): void {
    const { upstream } = exchange;
    void proxies[upstream](req, res, (err?: unknown) => {
      log.warn({ upstream, err }, 'proxy could not start');
      exchange.fail([502, ErrorCode.badGateway, `The ${upstream} service failed to answer`]);
    });
  }

  return (req, res, upstream, headers, fail) => {
    const exchange: Exchange = { upstream, headers, fail, timedOut: false, retried: false };
    (req as ProxiedRequest)[EXCHANGE] = exchange;
    send(req, res, exchange);
  };
}
