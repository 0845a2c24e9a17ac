import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import { ErrorCode } from '@mkt/contracts/gateway';
import { CLIENT_ADDRESS_HEADER } from '@mkt/kit/http';
import { trustedHopValue } from '../http/trusted-hops';
import { propagateTraceTo, startProxySpan, tracingEnabled } from '@mkt/kit/tracing';
import type { Logger } from '@mkt/kit/logger';
import type { Upstream } from './routes';

export interface ForwardOptions {
  targets: Record<Upstream, string>;
  timeoutMs: number;
  /** `TRUST_PROXY`: how many proxy hops in front of the gateway write the `X-Forwarded-*` headers. */
  trustProxyHops: number;
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
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
// The connection failed under a request that got no answer: a pooled socket the service closed,
// or one the pool's own idle timer closed as the request was given to it (`UND_ERR_INFO`,
// `UND_ERR_CLOSED`: the sockets a burst opened all reach their idle limit at once).
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_INFO', 'UND_ERR_CLOSED']);
// How many times such a request goes again: another pooled socket may be closing too.
const RESENDS = 2;
// Hop-by-hop: they describe one connection, never the next one (a client's `Connection: close`
// must not close the pooled socket to the service). `transfer-encoding` is the framing of one
// hop (the next is framed by its own writer) and `expect` is answered by the gateway's server.
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'transfer-encoding'];
const REQUEST_ONLY = ['expect'];
// With tracing on, the client instrumentation sends the gateway's own span as the parent: the
// client's trace context must not go as a second one.
const TRACE_HEADERS = ['traceparent', 'tracestate'];

const HOP_BY_HOP_NAMES = new Set(HOP_BY_HOP);

/**
 * The answer's head as one flat list of names and values, handed to `writeHead` in one call:
 * the service's headers without its connection headers, then each of the gateway's (`extra`)
 * the service did not set. Built afresh rather than by deleting from the service's header
 * object (a delete turns an object into a slow dictionary, for every later read of it).
 */
function answerHead(answer: IncomingHttpHeaders, extra: OutgoingHttpHeaders): string[] {
  const head: string[] = [];
  for (const name in answer) {
    if (HOP_BY_HOP_NAMES.has(name)) continue;
    const value = answer[name];
    if (value === undefined) continue;
    if (typeof value === 'string') head.push(name, value);
    else for (const each of value) head.push(name, each);
  }
  for (const name in extra) {
    const value = extra[name];
    if (value === undefined || answer[name] !== undefined) continue;
    if (Array.isArray(value)) for (const each of value) head.push(name, each);
    else head.push(name, String(value));
  }
  return head;
}

/** An idempotent method (RFC 9110 §9.2.2) whose request has no body to stream again. */
function isResendable(req: IncomingMessage): boolean {
  return IDEMPOTENT.has(req.method ?? '') && !hasBody(req);
}

function hasBody(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && Number(length) !== 0;
}

/**
 * The `X-Forwarded-*` headers are the edge's, never the client's: `X-Forwarded-For` is the one
 * address the edge worked out for the client (`x-client-address`: the socket's, or the one its
 * trusted proxy hops saw) — what a service's server span records as `client.address` is never an
 * address the client wrote; `X-Forwarded-Host` is the `Host` the gateway received (edge proxies
 * pass the client's `Host` on; a hop's `X-Forwarded-Host` cannot be told from one the client
 * wrote when the hop writes none); `X-Forwarded-Proto` and `-Port` are the gateway's own protocol
 * and port — or, with `TRUST_PROXY` hops (TLS ends there), what the trusted hop wrote in each
 * (read as the client address is: `trustedHopValue`) when it is well-formed: `http` or `https`, a
 * port number. The client's values and its `Forwarded` are not passed on (the services' http
 * instrumentation would read its `for=` and `host=` first).
 */
/** A TCP port number (1–65535), as a hop writes it. */
const PORT = /^(?:[1-9]\d{0,3}|[1-5]\d{4}|6[0-4]\d{3}|65[0-4]\d{2}|655[0-2]\d|6553[0-5])$/;

function addForwarded(headers: IncomingHttpHeaders, req: IncomingMessage, hops: number): void {
  const client = headers[CLIENT_ADDRESS_HEADER];
  const socket = req.socket as IncomingMessage['socket'] & { encrypted?: boolean };
  if (headers.forwarded !== undefined) delete headers.forwarded;
  headers['x-forwarded-for'] = typeof client === 'string' && client ? client : (socket.remoteAddress ?? '');
  headers['x-forwarded-host'] = headers.host ?? '';
  const proto = trustedHopValue(headers['x-forwarded-proto'], hops);
  headers['x-forwarded-proto'] = proto === 'http' || proto === 'https' ? proto : socket.encrypted ? 'https' : 'http';
  const port = trustedHopValue(headers['x-forwarded-port'], hops);
  headers['x-forwarded-port'] = port !== null && PORT.test(port) ? port : String(socket.localPort ?? '');
}

/**
 * The proxy: one undici pool per service, streaming bodies untouched in both directions on
 * keep-alive connections (undici closes an idle one before the service's `Keep-Alive: timeout`
 * says it would, so a socket the service is closing is not reused; at most 30 s). The request
 * goes as the client sent it — method, target, `Host`, `Authorization`, body — with
 * `X-Forwarded-For/-Host/-Proto/-Port` set by the edge (`addForwarded`) and the client's
 * connection headers and `Forwarded` left out; the
 * answer comes back with the service's status and headers (its connection headers left out,
 * the gateway's joined where the service set none), with backpressure both ways. Failures
 * answer with the error envelope: refused/unresolvable → 503, broken → 502, no answer (or a
 * body that stalls) for `timeoutMs` → 504. An idempotent request without a body whose pooled
 * connection was reset before any answer is sent again, at most twice.
 */
export function createForward({ targets, timeoutMs, trustProxyHops, log }: ForwardOptions): Forward {
  const pools = Object.fromEntries(
    Object.entries(targets).map(([upstream, target]) => [
      upstream,
      new Pool(new URL(target).origin, { connections: 512, keepAliveMaxTimeout: 30_000 }),
    ]),
  ) as Record<Upstream, Pool>;
  const urls = Object.fromEntries(Object.entries(targets).map(([upstream, target]) => [upstream, new URL(target)])) as Record<
    Upstream,
    URL
  >;
  const dropTrace = tracingEnabled();
  // The services are ours: the proxied calls carry the trace context.
  propagateTraceTo(...Object.values(targets));

  return (req, res, upstream, extra, fail) => {
    const headers = req.headers;
    for (const name of HOP_BY_HOP) if (headers[name] !== undefined) delete headers[name];
    for (const name of REQUEST_ONLY) if (headers[name] !== undefined) delete headers[name];
    if (dropTrace) for (const name of TRACE_HEADERS) if (headers[name] !== undefined) delete headers[name];
    addForwarded(headers, req, trustProxyHops);
    const body = hasBody(req) ? req : null;
    const options: Dispatcher.DispatchOptions = {
      path: req.url ?? '/',
      method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
      headers,
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    };
    let resends = 0;
    let controller: Dispatcher.DispatchController | null = null;
    // With tracing on: the call's client span (a sampled request's) and its trace headers.
    let endSpan = dropTrace ? startProxySpan(options.method, urls[upstream], options.path, headers as Record<string, unknown>) : null;
    let status: number | null = null;
    const spanEnded = (err?: Error) => {
      endSpan?.(status, err);
      endSpan = null;
    };
    // The client went away before the answer was complete: stop asking the service.
    res.once('close', () => {
      if (res.writableFinished) return;
      const gone = new Error('the client went away');
      spanEnded(gone);
      controller?.abort(gone);
    });

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        if (res.destroyed) started.abort(new Error('the client went away'));
      },
      onResponseStart(ctl, statusCode, answer, statusMessage) {
        status = statusCode;
        const head = answerHead(answer, extra);
        if (statusMessage) res.writeHead(statusCode, statusMessage, head);
        else res.writeHead(statusCode, head);
      },
      onResponseData(ctl, chunk) {
        if (!res.write(chunk)) {
          ctl.pause();
          res.once('drain', () => ctl.resume());
        }
      },
      onResponseEnd() {
        spanEnded();
        res.end();
      },
      onResponseError(_ctl, err: Error & { code?: string; cause?: { code?: string } }) {
        const code = err.code ?? '';
        const cause = err.cause?.code ?? '';
        // The connection was reset before any answer: a pooled socket the service closed just
        // as we sent on it (its idle timeout won, or it is shutting down), or a new one still in
        // its listen queue when it stopped listening. An idempotent request without a body goes
        // again: a body was streamed from the client and is gone, so a resent PUT would
        // leave the service waiting for bytes that never come (a 504 after the timeout).
        // At most twice: the sockets a burst opened reach their idle limit together, so the
        // next one the pool hands out may be closing as well.
        if (
          (RESET_CODES.has(code) || RESET_CODES.has(cause)) &&
          resends < RESENDS &&
          !res.headersSent &&
          !res.destroyed &&
          isResendable(req)
        ) {
          resends += 1;
          // On the next turn, once the pool has taken back the connection that failed: it
          // connects again, so the request goes on a new socket (which stays in the pool).
          setImmediate(() => pools[upstream].dispatch(options, handler));
          return;
        }
        spanEnded(err);
        if (res.writableEnded || res.destroyed) return;
        const failure: UpstreamFailure = TIMEOUT_CODES.has(code)
          ? [504, ErrorCode.gatewayTimeout, `The ${upstream} service did not answer in time`]
          : UNAVAILABLE_CODES.has(code) || UNAVAILABLE_CODES.has(cause)
            ? [503, ErrorCode.unavailable, `The ${upstream} service is unavailable`]
            : [502, ErrorCode.badGateway, `The ${upstream} service failed to answer`];
        log.warn({ upstream, err, status: failure[0], reqId: extra['x-request-id'] }, 'upstream failure');
        if (res.headersSent) res.destroy();
        else fail(failure);
      },
    };
    pools[upstream].dispatch(options, handler);
  };
}
