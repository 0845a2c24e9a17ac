import {
  context,
  propagation,
  trace,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  CompositePropagator,
  getRPCMetadata,
  RPCType,
  setRPCMetadata,
  suppressTracing,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
  type RPCMetadata,
} from '@opentelemetry/core';
import { redactedTarget, SECRET_QUERY_PARAMS } from './query-secrets';
// Types only: the modules themselves are required when tracing is on.
import type * as SdkNode from '@opentelemetry/sdk-node';
import type * as InstrumentationHttp from '@opentelemetry/instrumentation-http';
import type * as InstrumentationUndici from '@opentelemetry/instrumentation-undici';
import type * as InstrumentationExpress from '@opentelemetry/instrumentation-express';
import type * as InstrumentationMongodb from '@opentelemetry/instrumentation-mongodb';

/**
 * OpenTelemetry traces (ADR 0012, docs/observability.md). `initTracing` runs first in every
 * service's `main.ts` (through `@mkt/kit/tracing`), before express, http, mongodb or amqplib are
 * required, so that the instrumentations can patch them.
 *
 * On when `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_TRACES_EXPORTER` (not `none`) is set: the SDK's NodeSDK reads the standard variables
 * itself (protocol, sampler, `OTEL_BSP_*`, headers); instrumentations of http (in and out),
 * undici (fetch), express and mongodb; spans written by hand only where none exists (the outbox
 * publish, the consumer's handling).
 *
 * Off otherwise: no SDK is loaded, only W3C trace-context propagation over an AsyncLocalStorage
 * context manager — an incoming `traceparent` reaches the calls and events made for the request
 * unchanged (`traceContextMiddleware`, `outgoingTraceHeaders`), and log lines carry its ids.
 *
 * Trace context stays inside the marketplace, both ways. Outgoing, `traceparent`, `tracestate`
 * and `baggage` go only to the origins a service registered as its peers (`propagateTraceTo`:
 * the gateway's upstreams, the wallet a consultation calls, the gateway's JWKS); a call to any
 * other host (a payment provider) carries none — over fetch it keeps its client span, over
 * `http.request` it is not traced. Incoming, a server whose callers are not ours (the gateway)
 * is marked with `distrustIncomingTraceContext`: the callers' trace headers are taken off each
 * request before anything reads them, so the process decides sampling itself (a new trace,
 * linked to the caller's span) and the services behind it follow that decision.
 */

export interface TracingHandle {
  enabled: boolean;
  /** Flushes the exporter (every ended span is sent) and stops the SDK. */
  shutdown: () => Promise<void>;
}

const OFF: TracingHandle = { enabled: false, shutdown: async () => undefined };
let current: TracingHandle | null = null;

/** Whether the environment asks for exported traces. */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (/^true$/i.test(env.OTEL_SDK_DISABLED ?? '')) return false;
  const exporter = (env.OTEL_TRACES_EXPORTER ?? '').trim();
  if (exporter === 'none') return false;
  return !!(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || exporter);
}

/** Whether `initTracing` started the SDK in this process. */
export function tracingEnabled(): boolean {
  return current?.enabled ?? false;
}

/**
 * Sets tracing up once per process (later calls return the first handle). `serviceName` is the
 * resource's `service.name` unless `OTEL_SERVICE_NAME` says otherwise.
 */
export interface TracingOptions {
  /**
   * Client spans of undici (fetch) calls by the instrumentation (default true). A process whose
   * only undici calls are ones it traces itself (the gateway's proxy: `startProxySpan`) turns it
   * off, so that no span is built for calls no trace will keep.
   */
  undiciSpans?: boolean;
  /**
   * Server spans of incoming requests by the http instrumentation (default true). A process that
   * starts them itself (the gateway's edge: `traceRequests`) turns it off: the instrumentation
   * works out a span's attributes and parses its URL before the sampler decides, on every request.
   */
  httpServerSpans?: boolean;
}

export function initTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env, settings: TracingOptions = {}): TracingHandle {
  if (current) return current;
  if (!tracingRequested(env)) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new PeersOnlyPropagator(new W3CTraceContextPropagator()));
    current = OFF;
    return current;
  }
  // Loaded only when on: the SDK and its exporters cost nothing to a process that does not trace.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof SdkNode;
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof InstrumentationHttp;
  const { UndiciInstrumentation } = require('@opentelemetry/instrumentation-undici') as typeof InstrumentationUndici;
  const { ExpressInstrumentation, ExpressLayerType } = require('@opentelemetry/instrumentation-express') as typeof InstrumentationExpress;
  const { MongoDBInstrumentation } = require('@opentelemetry/instrumentation-mongodb') as typeof InstrumentationMongodb;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME ? undefined : serviceName,
    // Metrics are prom-client's (`/metrics`), logs are pino's on stdout: traces only.
    metricReaders: [],
    logRecordProcessors: [],
    // W3C trace context and baggage (the SDK's default), injected only towards our own services.
    textMapPropagator: new PeersOnlyPropagator(
      new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
    ),
    instrumentations: [
      new HttpInstrumentation({
        disableIncomingRequestInstrumentation: settings.httpServerSpans === false,
        // A span's `url.query` (server) and `url.full` (client) never carry a credential: the
        // checkout pages' `?token=` and any other name below read `REDACTED`.
        // (the names the instrumentation knows; the hook below applies the rest of the rule, names
        // ending in `token` or `secret`, to a recorded span).
        redactedQueryParamsServer: [...SECRET_QUERY_PARAMS],
        redactedQueryParams: [...SECRET_QUERY_PARAMS],
        // Probes and scrapes are not requests anybody wants to trace.
        ignoreIncomingRequestHook: (req) => PROBES.has((req.url ?? '').split('?')[0] ?? ''),
        // A call over `http.request` to a host that is not one of our services is not traced:
        // no span, and no trace headers put on it.
        ignoreOutgoingRequestHook: (options) => !isPeer(options),
        // A request whose caller's trace was not followed links to it.
        requestHook: (span, request) => {
          const caller = (request as Partial<DistrustedRequest>)[CALLER_TRACE];
          if (caller) span.addLink({ context: caller });
          if (span.isRecording()) redactSpanQuery(span);
        },
      }),
      ...(settings.undiciSpans === false
        ? []
        : [
            new UndiciInstrumentation({
              // Over fetch (undici) the call keeps its client span; the propagator leaves its headers out.
              requestHook: (span, request) => {
                if (!isPeer(request.origin)) toOutsiders.add(span);
              },
            }),
          ]),
      // Routers and route handlers; not every middleware (request id, log, body parser, …): a
      // span each would be most of a trace and of its cost.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      // amqplib's instrumentation is left out on purpose: it injects the context active at
      // publish time, and the outbox must carry the one stored when the event was written.
      new MongoDBInstrumentation(),
    ],
  });
  sdk.start();
  current = { enabled: true, shutdown: () => sdk.shutdown() };
  return current;
}

/** The span attributes that carry a request's query, as the http instrumentation writes them. */
const QUERY_ATTRIBUTES = ['url.query', 'url.full', 'http.target', 'http.url'] as const;

/** A recorded span's query attributes with every secret parameter (kit's one rule) reading `REDACTED`. */
function redactSpanQuery(span: Span): void {
  const attributes = (span as Partial<{ attributes: Attributes }>).attributes;
  if (!attributes) return;
  for (const name of QUERY_ATTRIBUTES) {
    const value = attributes[name];
    if (typeof value !== 'string' || !value.includes('=')) continue;
    const query = name === 'url.query';
    const redacted = query ? redactedTarget(`?${value}`).slice(1) : redactedTarget(value);
    if (redacted !== value) span.setAttribute(name, redacted);
  }
}

/** Probes and scrapes: not requests anybody wants to trace. */
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);
const peers = new Set<string>();
/** Client spans of calls to hosts that are not our services: no trace headers are injected for them. */
const toOutsiders = new WeakSet<Span>();

type RequestTarget = { protocol?: string | null; hostname?: string | null; host?: string | null; port?: string | number | null };

/** `protocol//host:port` of a URL or of `http.request` options, the port always written; '' when unreadable. */
function originOf(target: string | URL | RequestTarget): string {
  const key = (protocol: string, hostname: string, port: string | number | null | undefined) =>
    `${protocol}//${hostname.replace(/^\[|\]$/g, '')}:${port || (protocol === 'https:' ? 443 : 80)}`.toLowerCase();
  if (typeof target !== 'string' && !(target instanceof URL))
    return key(target.protocol || 'http:', target.hostname || target.host || 'localhost', target.port);
  try {
    const url = new URL(target);
    return key(url.protocol, url.hostname, url.port);
  } catch {
    return '';
  }
}

/** Whether `target` is at an origin a service registered as its peer (`propagateTraceTo`). */
function isPeer(target: string | URL | RequestTarget): boolean {
  const key = originOf(target);
  return key !== '' && peers.has(key);
}

/**
 * Registers the origins of our own services this process calls (their URLs from its
 * configuration): trace context is sent to them and to no other host.
 */
export function propagateTraceTo(...urls: string[]): void {
  for (const url of urls) {
    const key = originOf(url);
    if (key) peers.add(key);
  }
}

/**
 * The process's propagator: extracts as the inner one does; injects nothing for the client span
 * of a call to a host that is not one of our services (marked by the instrumentations' hooks).
 */
class PeersOnlyPropagator implements TextMapPropagator {
  constructor(private readonly inner: TextMapPropagator) {}

  inject(ctx: Context, carrier: unknown, setter: TextMapSetter): void {
    const span = trace.getSpan(ctx);
    if (span && toOutsiders.has(span)) return;
    this.inner.inject(ctx, carrier, setter);
  }

  extract(ctx: Context, carrier: unknown, getter: TextMapGetter): Context {
    return this.inner.extract(ctx, carrier, getter);
  }

  fields(): string[] {
    return this.inner.fields();
  }
}

const CALLER_TRACE = Symbol('mkt.callerTraceContext');
const CALLER_TRACE_HEADERS = ['traceparent', 'tracestate', 'baggage'] as const;
type DistrustedRequest = IncomingMessage & { [CALLER_TRACE]?: SpanContext };

/**
 * Makes `server` the edge of the traces: each request's `traceparent`, `tracestate` and
 * `baggage` are taken off it before the http instrumentation, the express middleware or a proxy
 * reads them. The request starts a trace of its own, sampled by this process's sampler (the
 * caller's sampled flag decides nothing), linked to the caller's span when this process samples it; the
 * calls and events it makes carry that new context, never the caller's trace id.
 */
export function distrustIncomingTraceContext(server: Server): void {
  // The inherited emit, looked up at each event: the one the http instrumentation wrapped.
  const emit = (target: Server) =>
    (Object.getPrototypeOf(target) as { emit: (event: string | symbol, ...args: unknown[]) => boolean }).emit;
  // Every event of the server passes here (each request's among them): the arguments go on as
  // they came, without a rest array and a spread per event, and a request without trace headers
  // (most of them) is only looked at.
  server.emit = function (this: Server, event: string | symbol): boolean {
    if (event === 'request') {
      // eslint-disable-next-line prefer-rest-params
      const request = arguments[1] as DistrustedRequest;
      const headers = request.headers;
      if (headers.traceparent !== undefined || headers.tracestate !== undefined || headers.baggage !== undefined) {
        const caller = trace.getSpanContext(contextFrom(headers));
        if (caller && isSpanContextValid(caller)) request[CALLER_TRACE] = caller;
        for (const name of CALLER_TRACE_HEADERS) delete headers[name];
      }
    }
    // eslint-disable-next-line prefer-rest-params
    return Reflect.apply(emit(this), this, arguments) as boolean;
  } as Server['emit'];
}

/**
 * `listener` with the server span of each request started here rather than by the http
 * instrumentation (`initTracing(…, { httpServerSpans: false })`), in the order that costs an
 * unsampled request least: the sampler decides first, on the span's name (the method) and kind
 * alone; only a sampled span gets its attributes (`http.request.method`, `url.scheme`,
 * `url.path`, `server.address`/`server.port`, `network.*`, `user_agent.original`; at the end
 * `http.response.status_code`, `http.route` when the app names one, `client.address`, an error
 * status from 500 on). The query is not recorded (it may carry a token). `listener` runs in the
 * span's context (a sampled span's with the RPC metadata express's instrumentation writes the
 * route into; an unsampled one's without, as nothing would read the route);
 * its request and response emitters are not bound to it (`bindToActiveContext` binds them
 * where their listeners need the trace). The caller's trace headers are followed only when
 * they are still on the request (`distrustIncomingTraceContext` takes them off, and the span
 * links to the caller's span instead). Probes and scrapes are not traced. With tracing off,
 * `listener` itself.
 */
export function traceRequests(listener: RequestListener): RequestListener {
  if (!tracingEnabled()) return listener;
  const spans = tracer();
  return (req, res) => {
    const target = req.url ?? '/';
    const query = target.indexOf('?');
    const path = query === -1 ? target : target.slice(0, query);
    if (PROBES.has(path)) return context.with(suppressTracing(ROOT_CONTEXT), () => listener(req, res));
    const headers = req.headers;
    const parent =
      headers.traceparent !== undefined || headers.baggage !== undefined ? propagation.extract(ROOT_CONTEXT, headers) : ROOT_CONTEXT;
    const method = req.method ?? 'GET';
    const span = spans.startSpan(method, { kind: SpanKind.SERVER }, parent);
    if (!span.isRecording()) {
      // Not sampled (most requests): the context carries the span's ids and nothing else — no
      // RPC metadata, whose route only a recorded span keeps.
      context.with(trace.setSpan(parent, span), listener, undefined, req, res);
      return;
    }
    const metadata: RPCMetadata = { type: RPCType.HTTP, span };
    recordServerSpan(span, metadata, req, res, method, path);
    context.with(setRPCMetadata(trace.setSpan(parent, span), metadata), listener, undefined, req, res);
  };
}

/** A sampled server span's attributes, and its end when the answer is finished or abandoned. */
function recordServerSpan(
  span: Span,
  metadata: RPCMetadata,
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  path: string,
): void {
  const socket = req.socket;
  const host = req.headers.host ?? '';
  const colon = host.lastIndexOf(':');
  const hasPort = colon !== -1 && colon > host.lastIndexOf(']');
  span.setAttributes({
    'http.request.method': method,
    'url.scheme': 'http',
    'url.path': path,
    'server.address': (hasPort ? host.slice(0, colon) : host).replace(/^\[|\]$/g, '') || 'localhost',
    'server.port': hasPort ? Number(host.slice(colon + 1)) : 80,
    'network.protocol.version': req.httpVersion,
  });
  if (socket.remoteAddress) span.setAttribute('network.peer.address', socket.remoteAddress);
  if (socket.remotePort) span.setAttribute('network.peer.port', socket.remotePort);
  const agent = req.headers['user-agent'];
  if (agent) span.setAttribute('user_agent.original', agent);
  const caller = (req as DistrustedRequest)[CALLER_TRACE];
  if (caller) span.addLink({ context: caller });
  res.once('close', () => {
    const status = res.statusCode;
    span.setAttribute('http.response.status_code', status);
    // The client's address as the process saw it (the gateway's edge writes it, its proxy hops trusted).
    const client = req.headers['x-client-address'];
    if (typeof client === 'string' && client) span.setAttribute('client.address', client);
    else if (socket.remoteAddress) span.setAttribute('client.address', socket.remoteAddress);
    const route = metadata.type === RPCType.HTTP ? metadata.route : undefined;
    if (route) {
      span.setAttribute('http.route', route);
      span.updateName(`${method} ${route}`);
    }
    if (status >= 500) {
      span.setAttribute('error.type', String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    if (!res.writableFinished) span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client went away' });
    span.end();
  });
}

/**
 * Binds emitters (a request and its response) to the active context, so their listeners run in
 * the request's trace — what the http instrumentation does for every request; under
 * `traceRequests` only the requests whose handlers listen to them (body parsers, handlers
 * awaiting the database) need it. A no-op with tracing off.
 */
export function bindToActiveContext(...emitters: EventEmitterLike[]): void {
  if (!tracingEnabled()) return;
  const active = context.active();
  for (const emitter of emitters) context.bind(active, emitter as never);
}

/**
 * The context active now, to be entered later with `runInContext` only if the later work needs it
 * (a listener of a request's events that mostly does not: no function bound per call, no context
 * entered when it is not used).
 */
export function activeContext(): Context {
  return context.active();
}

/** `work` run in `ctx` (a context `activeContext` returned earlier). */
export function runInContext<T>(ctx: Context, work: () => T): T {
  return context.with(ctx, work);
}

/** Flushes and stops tracing (kit's shutdown closers call it last). */
export async function shutdownTracing(): Promise<void> {
  await current?.shutdown();
}

export function tracer(): Tracer {
  return trace.getTracer('@mkt/kit');
}

export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

/** The W3C fields of a context (the active one by default); empty when there is no trace. */
export function traceContextOf(ctx: Context = context.active()): TraceCarrier {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  const out: TraceCarrier = {};
  if (carrier.traceparent) out.traceparent = carrier.traceparent;
  if (carrier.tracestate) out.tracestate = carrier.tracestate;
  return out;
}

/** The context a carrier (headers, a stored event) names; the root context when none. */
export function contextFrom(carrier: Record<string, unknown> | undefined): Context {
  if (!carrier || typeof carrier.traceparent !== 'string') return ROOT_CONTEXT;
  const fields: Record<string, string> = { traceparent: carrier.traceparent };
  if (typeof carrier.tracestate === 'string') fields.tracestate = carrier.tracestate;
  return propagation.extract(ROOT_CONTEXT, fields);
}

/**
 * Headers for an outgoing call: the active trace context when tracing is off (with it on, the
 * http and undici instrumentations inject it themselves, and a second `traceparent` would be
 * wrong). Spread into a request's headers.
 */
export function outgoingTraceHeaders(): Record<string, string> {
  return tracingEnabled() ? {} : (traceContextOf() as Record<string, string>);
}

/**
 * `trace_id`/`span_id` of the active span, for a log line (pino's mixin). A new object each
 * time: pino merges the line's own fields into it.
 */
export function traceLogFields(): object {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const ids = span.spanContext();
  return isSpanContextValid(ids) ? { trace_id: ids.traceId, span_id: ids.spanId } : {};
}

/**
 * The correlation id on the request's server span (with tracing on: the http instrumentation's
 * span, not the express middleware span that is active while a middleware runs).
 */
export function setRequestCorrelationId(id: string): void {
  if (!tracingEnabled()) return;
  const active = context.active();
  (getRPCMetadata(active)?.span ?? trace.getSpan(active))?.setAttribute('app.correlation_id', id);
}

interface EventEmitterLike {
  on: (...args: never[]) => unknown;
}

/**
 * With tracing off, express middleware that continues an incoming `traceparent`: the rest of
 * the request (body parsing, handlers, the log line at `finish`) runs in its context. With
 * tracing on the http instrumentation has done this (and started the server span): a no-op.
 */
export function traceContextMiddleware(): (
  req: { headers: Record<string, unknown> } & EventEmitterLike,
  res: EventEmitterLike,
  next: () => void,
) => void {
  return (req, res, next) => {
    if (tracingEnabled() || typeof req.headers.traceparent !== 'string') return next();
    const ctx = contextFrom(req.headers);
    if (ctx === ROOT_CONTEXT) return next();
    context.bind(ctx, req as never);
    context.bind(ctx, res as never);
    context.with(ctx, next);
  };
}

/**
 * The client span of a call the process makes itself to one of its peers (the gateway's proxied
 * request), with the trace headers put on `headers`: when the active span is sampled, a CLIENT
 * span named after the method, its child, whose context the call carries; the returned function
 * ends it with the answer's status (400 and above: an error) or the failure. When the active span
 * is not sampled no span is built — a span nobody keeps — and the call carries the active context
 * as it is, so the peer follows the same decision (and its log lines carry the trace's ids).
 */
export function startProxySpan(
  method: string,
  target: URL,
  path: string,
  headers: Record<string, unknown>,
): ((status: number | null, err?: Error) => void) | null {
  const active = context.active();
  const parent = trace.getSpan(active);
  if (!parent?.isRecording()) {
    propagation.inject(active, headers);
    return null;
  }
  const span = tracer().startSpan(
    method,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': method,
        // The query's credentials (`?token=` of the checkout pages) never reach the span.
        'url.full': `${target.origin}${redactedTarget(path)}`,
        'url.path': path.split('?', 1)[0]!,
        'url.scheme': target.protocol.slice(0, -1),
        'server.address': target.hostname,
        'server.port': Number(target.port || (target.protocol === 'https:' ? 443 : 80)),
      },
    },
    active,
  );
  propagation.inject(trace.setSpan(active, span), headers);
  return (status, err) => {
    if (status !== null) span.setAttribute('http.response.status_code', status);
    if (err) {
      span.recordException(err);
      span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
    } else if (status !== null && status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
}

/**
 * Runs `work` outside any request's trace: work on behalf of many requests (a rate limit's lease
 * of places) belongs to none of them, and makes no span of its own under one.
 */
export function withoutTraceContext<T>(work: () => T): T {
  return context.with(ROOT_CONTEXT, work);
}

export interface MessagingSpanInfo {
  /** The exchange (publish) or queue (process). */
  destination: string;
  routingKey: string;
  messageId?: string;
  correlationId?: string;
}

function messagingAttributes(info: MessagingSpanInfo, operation: 'send' | 'process'): Record<string, string> {
  const attributes: Record<string, string> = {
    'messaging.system': 'rabbitmq',
    'messaging.operation.type': operation,
    'messaging.destination.name': info.destination,
    'messaging.rabbitmq.destination.routing_key': info.routingKey,
  };
  if (info.messageId) attributes['messaging.message.id'] = info.messageId;
  if (info.correlationId) {
    attributes['messaging.message.conversation_id'] = info.correlationId;
    attributes['app.correlation_id'] = info.correlationId;
  }
  return attributes;
}

/** Marks the active span (a consumer's handling) failed: the handler threw. */
export function markActiveSpanFailed(err: unknown): void {
  const span = trace.getActiveSpan();
  if (!span) return;
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** Runs `work` in `span`, ending it after; a failure is recorded on it and rethrown. */
async function inSpan<T>(span: Span, parent: Context, work: (headers: Record<string, string>) => Promise<T>): Promise<T> {
  const ctx = trace.setSpan(parent, span);
  try {
    return await context.with(ctx, () => work(traceContextOf(ctx) as Record<string, string>));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    span.end();
  }
}

/**
 * A producer span for an event leaving the outbox: a child of the context stored when the event
 * was written (`stored`), so a later publish (the sweeper after a crash) stays in the request's
 * trace; `swept` also links it to that context. `publish` gets the headers to send (the span's
 * own context: the consumer's span is its child). With tracing off the stored context itself.
 */
export function publishSpan<T>(
  info: MessagingSpanInfo,
  stored: TraceCarrier | undefined,
  swept: boolean,
  publish: (headers: Record<string, string>) => Promise<T>,
): Promise<T> {
  const parent = stored?.traceparent ? contextFrom(stored as Record<string, unknown>) : context.active();
  const storedSpan = trace.getSpanContext(parent);
  const links: Link[] = swept && storedSpan && isSpanContextValid(storedSpan) ? [{ context: storedSpan }] : [];
  const span = tracer().startSpan(
    `publish ${info.routingKey}`,
    { kind: SpanKind.PRODUCER, attributes: { ...messagingAttributes(info, 'send'), 'app.outbox.swept': swept }, links },
    parent,
  );
  return inSpan(span, parent, publish);
}

/** A consumer span around a message's handling, the child of the publish named by `headers`. */
export function consumeSpan<T>(
  info: MessagingSpanInfo,
  headers: Record<string, unknown> | undefined,
  handle: () => Promise<T>,
): Promise<T> {
  const parent = contextFrom(headers);
  const span = tracer().startSpan(
    `process ${info.routingKey}`,
    { kind: SpanKind.CONSUMER, attributes: messagingAttributes(info, 'process') },
    parent,
  );
  return inSpan(span, parent, () => handle());
}
