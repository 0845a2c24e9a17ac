/**
 * `@mkt/kit/tracing`: the tracing module alone, without the rest of kit (express, mongoose,
 * amqplib), so that a service's `main.ts` can start tracing before anything it instruments is loaded.
 */
export {
  activeContext,
  bindToActiveContext,
  initTracing,
  outgoingTraceHeaders,
  propagateTraceTo,
  runInContext,
  setRequestCorrelationId,
  startProxySpan,
  traceContextMiddleware,
  traceRequests,
  tracingEnabled,
  withoutTraceContext,
} from '../tracing';
