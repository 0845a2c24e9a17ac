import http, { type Server } from 'node:http';
import { renderMetrics, wantsOpenMetrics } from '@mkt/kit/metrics';
import type { Runtime } from '@mkt/kit/runtime';

/**
 * The gateway's Prometheus metrics on a listener of their own. The public port never serves
 * `/metrics` (nor proxies any service's): Prometheus scrapes this port inside the cluster,
 * where the NetworkPolicy decides who reaches it; the Service and the Ingress do not expose it.
 */
export function startMetricsServer(port: number, host: string): Promise<Server> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    renderMetrics(wantsOpenMetrics(req.headers.accept)).then(
      ({ contentType, text }) => res.writeHead(200, { 'content-type': contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

/** `startMetricsServer` as one of the runtime's jobs: started with the service, closed at shutdown. */
export function metricsListener(port: number, host: string): (runtime: Pick<Runtime, 'log'>) => () => Promise<void> {
  return ({ log }) => {
    const started = startMetricsServer(port, host).then(
      (server) => {
        log.info({ port, host }, 'metrics listening');
        return server;
      },
      (err: Error) => {
        log.error({ err, port }, 'metrics listener could not start');
        return null;
      },
    );
    return async () => {
      const server = await started;
      if (server) await new Promise((resolve) => server.close(resolve));
    };
  };
}
