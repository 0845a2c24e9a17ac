// Imported first by main.ts: the instrumentations patch http, express and mongodb only if they
// are registered before those are loaded (docs/observability.md).
import { initTracing } from '@mkt/kit/tracing';

// Its undici calls are the proxied requests, whose client spans the proxy makes itself (only
// for sampled requests: proxy/forward.ts).
initTracing('gateway', process.env, { undiciSpans: false });
