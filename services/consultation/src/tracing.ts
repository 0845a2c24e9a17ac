// Imported first by main.ts: the instrumentations patch http, express and mongodb only if they
// are registered before those are loaded (docs/observability.md).
import { initTracing } from '@mkt/kit/tracing';

initTracing('consultation');
