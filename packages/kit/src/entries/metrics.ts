/** `@mkt/kit/metrics`: the Prometheus registry kit fills and a service adds its own metrics to. */
export { beforeScrape, Counter, Gauge, getMetrics, observeWithTrace, renderMetrics, wantsOpenMetrics } from '../metrics';
