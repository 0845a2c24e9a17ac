// Imported first by main.ts: the instrumentations patch http, express and mongodb only if they
// are registered before those are loaded (docs/observability.md).
import { initTracing } from '@mkt/kit/tracing';

// Its undici calls are the proxied requests, whose client spans the proxy makes itself (only
// for sampled requests: proxy/forward.ts); its server spans are started by the edge after the
// sampler's decision (app.ts, kit's traceRequests), not by the http instrumentation.
initTracing('gateway', process.env, { undiciSpans: false, httpServerSpans: false });
