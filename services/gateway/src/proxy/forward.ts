import http, { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
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

/** Sends one request upstream and its answer back; `headers` (the request's own, changed in place) go on the answer unless the upstream sets the same. */
export type Forward = (
  req: IncomingMessage,
  res: ServerResponse,
  upstream: Upstream,
  headers: OutgoingHttpHeaders,
  fail: (failure: UpstreamFailure) => void,
) => void;

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
// Hop-by-hop: they describe one connection, never the next one.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade', 'proxy-authorization']);

/**
 * The proxy: streams a request to its service and the answer back, bodies untouched, on
 * keep-alive sockets whose idle timeout (30 s) is below the services' keepAliveTimeout (65 s),
 * so we never reuse a socket the service is closing. `X-Forwarded-For/-Port/-Proto/-Host` are
 * added (appended to what came in); the client's own connection headers are not passed on.
 * Upstream refused/unresolvable → 503, broken → 502, slower than `timeoutMs` → 504.
 */
export function createForward({ targets, timeoutMs, log }: ForwardOptions): Forward {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512, maxFreeSockets: 256, timeout: 30_000, scheduling: 'lifo' });
  const endpoints = Object.fromEntries(
    Object.entries(targets).map(([name, url]) => {
      const parsed = new URL(url);
      return [name, { hostname: parsed.hostname, port: Number(parsed.port || 80) }];
    }),
  ) as Record<Upstream, { hostname: string; port: number }>;

  return (req, res, upstream, headers, fail) => {
    const { hostname, port } = endpoints[upstream];
    let timedOut = false;
    const proxyReq = http.request({ agent, hostname, port, method: req.method, path: req.url, headers: outgoingHeaders(req) });
    proxyReq.setTimeout(timeoutMs, () => {
      timedOut = true;
      proxyReq.destroy(new Error(`upstream ${upstream} did not answer within ${timeoutMs} ms`));
    });
    proxyReq.on('response', (proxyRes) => {
      // `headers` is this request's own object: the upstream's headers are merged into it.
      for (const name in proxyRes.headers) if (!HOP_BY_HOP.has(name)) headers[name] = proxyRes.headers[name];
      // An HTTP/1.0 client cannot read a chunked answer: Node closes the connection instead.
      if (req.httpVersion === '1.0') delete headers['transfer-encoding'];
      res.writeHead(proxyRes.statusCode ?? 502, proxyRes.statusMessage, headers);
      proxyRes.pipe(res);
      proxyRes.on('error', () => res.destroy());
    });
    proxyReq.on('error', (err: Error & { code?: string }) => {
      const failure: UpstreamFailure = timedOut
        ? [504, ErrorCode.gatewayTimeout, `The ${upstream} service did not answer in time`]
        : UNAVAILABLE_CODES.has(err.code ?? '')
          ? [503, ErrorCode.unavailable, `The ${upstream} service is unavailable`]
          : [502, ErrorCode.badGateway, `The ${upstream} service failed to answer`];
      if (res.writableEnded || res.destroyed) return;
      log.warn({ upstream, err: err.message, code: err.code, status: failure[0], reqId: headers['x-request-id'] }, 'upstream failure');
      if (res.headersSent) res.destroy();
      else fail(failure);
    });
    // The client went away before the answer was complete: stop asking the service.
    res.on('close', () => {
      if (!res.writableFinished) proxyReq.destroy();
    });
    req.pipe(proxyReq);
  };
}

function outgoingHeaders(req: IncomingMessage): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  const inbound = req.headers;
  for (const name in inbound) if (!HOP_BY_HOP.has(name)) out[name] = inbound[name];
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  appendForwarded(out, 'x-forwarded-for', req.socket.remoteAddress ?? '');
  appendForwarded(out, 'x-forwarded-port', String(req.socket.localPort ?? ''));
  appendForwarded(out, 'x-forwarded-proto', encrypted ? 'https' : 'http');
  out['x-forwarded-host'] ??= inbound.host ?? '';
  return out;
}

function appendForwarded(headers: OutgoingHttpHeaders, name: string, value: string): void {
  const existing = headers[name];
  headers[name] = existing ? `${String(existing)},${value}` : value;
}
