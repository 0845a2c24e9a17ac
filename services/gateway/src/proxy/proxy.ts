import http, { type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { RequestHandler } from 'express';
import { createProxyMiddleware, proxyEventsPlugin } from 'http-proxy-middleware';
import { ErrorCode, errorBody } from '@mkt/contracts';
import { correlationIdOf, type Logger } from '@mkt/kit';
import { upstreamFor, type Upstream } from './routes';

export interface ProxyOptions {
  targets: Record<Upstream, string>;
  timeoutMs: number;
  log: Logger;
}

interface ProxiedRequest extends IncomingMessage {
  upstream?: Upstream;
  upstreamTimedOut?: boolean;
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Streams requests to the owning service, bodies untouched. Keep-alive sockets whose idle
 * timeout (30 s) is below the services' keepAliveTimeout (65 s), so we never reuse a socket the
 * service is closing. Upstream refused → 503, broken → 502, slower than the timeout → 504.
 */
export function createProxy({ targets, timeoutMs, log }: ProxyOptions): RequestHandler {
  const agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 1_000, maxSockets: 512, maxFreeSockets: 64, timeout: 30_000 });
  return createProxyMiddleware<IncomingMessage, ServerResponse>({
    // Our own error answers (the envelope, 502/503/504) instead of the default plugins'.
    ejectPlugins: true,
    plugins: [proxyEventsPlugin],
    agent,
    xfwd: true,
    pathFilter: (path) => upstreamFor(path) !== null,
    router: (req) => targets[upstreamFor(req.url?.split('?')[0] ?? '/')!],
    target: targets.wallet,
    on: {
      proxyReq: (proxyReq: ClientRequest, req: ProxiedRequest, res) => {
        const upstream = upstreamFor(req.url?.split('?')[0] ?? '/');
        req.upstream = upstream ?? undefined;
        (res as ServerResponse & { locals?: Record<string, unknown> }).locals ??= {};
        (res as ServerResponse & { locals: Record<string, unknown> }).locals.logFields = { upstream };
        proxyReq.setHeader('x-request-id', correlationIdOf(req));
        proxyReq.setTimeout(timeoutMs, () => {
          req.upstreamTimedOut = true;
          proxyReq.destroy(new Error(`upstream ${upstream} did not answer within ${timeoutMs} ms`));
        });
      },
      error: (err: Error & { code?: string }, req: ProxiedRequest, res: ServerResponse | Socket) => {
        if (!('writeHead' in res)) return;
        const upstream = req.upstream ?? upstreamFor(req.url?.split('?')[0] ?? '/');
        const [status, code, message] = req.upstreamTimedOut
          ? [504, ErrorCode.gatewayTimeout, `The ${upstream} service did not answer in time`]
          : UNAVAILABLE_CODES.has(err.code ?? '')
            ? [503, ErrorCode.unavailable, `The ${upstream} service is unavailable`]
            : [502, ErrorCode.badGateway, `The ${upstream} service failed to answer`];
        log.warn({ upstream, err: err.message, code: err.code, status, reqId: correlationIdOf(req) }, 'upstream failure');
        if (res.headersSent) {
          res.destroy();
          return;
        }
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(errorBody(message, [{ path: '', code, message }])));
      },
    },
  });
}
