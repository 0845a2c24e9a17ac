// The k8s run's test OTLP/HTTP receiver (scripts/k8s-e2e.mjs; k8s/README.md "Kubernetes for real"):
// a tiny Node server, run from the gateway's image (the same digest the run deploys) in its own
// namespace, that keeps the spans the services export as OTLP/JSON (the ci overlay's
// components/opentelemetry sets OTEL_EXPORTER_OTLP_PROTOCOL=http/json) and serves them back on
// GET /spans. The run reads them through the API server's service proxy: no port of the node, no
// port-forward.

export const RECEIVER_NAMESPACE = 'marketplace-ci-otel';
const NAME = 'otlp-receiver';

// Plain CommonJS for the image's node: OTLP/JSON in (gzip or not), one summary row per span out.
const SERVER = `'use strict';
const http = require('node:http');
const zlib = require('node:zlib');
const spans = [];
const value = (v) => (v ? (v.stringValue ?? v.intValue ?? v.boolValue ?? null) : null);
http
  .createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/v1/traces') {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        try {
          let body = Buffer.concat(chunks);
          if (req.headers['content-encoding'] === 'gzip') body = zlib.gunzipSync(body);
          const doc = JSON.parse(body.toString('utf8'));
          for (const rs of doc.resourceSpans ?? []) {
            const attrs = Object.fromEntries((rs.resource?.attributes ?? []).map((a) => [a.key, value(a.value)]));
            for (const ss of rs.scopeSpans ?? [])
              for (const s of ss.spans ?? [])
                spans.push({
                  service: attrs['service.name'],
                  pod: attrs['k8s.pod.name'],
                  namespace: attrs['k8s.namespace.name'],
                  name: s.name,
                  traceId: s.traceId,
                });
          }
          if (spans.length > 20000) spans.splice(0, spans.length - 20000);
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch (err) {
          res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
        }
      });
      return;
    }
    if (req.method === 'GET' && req.url === '/spans') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(spans));
      return;
    }
    if (req.url === '/healthz') {
      res.writeHead(200).end('ok');
      return;
    }
    res.writeHead(404).end();
  })
  .listen(4318, '0.0.0.0');
`;

/** The receiver's objects: its namespace, the server in a ConfigMap, a Deployment of the gateway's image, a Service on 4318. */
export function receiverManifest(image) {
  const labels = { 'app.kubernetes.io/name': NAME, 'app.kubernetes.io/part-of': 'marketplace-ci' };
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: RECEIVER_NAMESPACE, labels } },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: NAME, namespace: RECEIVER_NAMESPACE, labels },
        data: { 'server.cjs': SERVER },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: NAME, namespace: RECEIVER_NAMESPACE, labels },
        spec: {
          replicas: 1,
          selector: { matchLabels: { 'app.kubernetes.io/name': NAME } },
          template: {
            metadata: { labels },
            spec: {
              automountServiceAccountToken: false,
              securityContext: { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } },
              containers: [
                {
                  name: 'receiver',
                  image,
                  imagePullPolicy: 'IfNotPresent',
                  command: ['node', '/receiver/server.cjs'],
                  ports: [{ name: 'otlp-http', containerPort: 4318 }],
                  readinessProbe: { httpGet: { path: '/healthz', port: 4318 }, periodSeconds: 2 },
                  resources: { requests: { cpu: '10m', memory: '64Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
                  securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
                  volumeMounts: [{ name: 'server', mountPath: '/receiver', readOnly: true }],
                },
              ],
              volumes: [{ name: 'server', configMap: { name: NAME } }],
            },
          },
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: NAME, namespace: RECEIVER_NAMESPACE, labels },
        spec: { selector: { 'app.kubernetes.io/name': NAME }, ports: [{ name: 'otlp-http', port: 4318, targetPort: 4318 }] },
      },
    ],
  };
}

/** The spans the receiver holds, read through the API server's service proxy. */
export async function receivedSpans(k) {
  const text = await k(['get', '--raw', `/api/v1/namespaces/${RECEIVER_NAMESPACE}/services/${NAME}:4318/proxy/spans`]);
  return JSON.parse(text);
}

/**
 * Whether the traces arrived: spans of the gateway and of at least `others` other services, each
 * service's spans naming, as k8s.pod.name, a pod of its Deployment (`podsOf`: service → pod names)
 * and the marketplace's namespace. Returns [ok, detail].
 */
export function judgeTraces(spans, podsOf, namespace, { others = 2 } = {}) {
  const byService = new Map();
  for (const span of spans) {
    if (!span.service) continue;
    const row = byService.get(span.service) ?? { spans: 0, pods: new Set(), foreign: new Set(), traces: new Set() };
    row.spans += 1;
    row.traces.add(span.traceId);
    if (span.pod && (podsOf[span.service] ?? []).includes(span.pod) && span.namespace === namespace) row.pods.add(span.pod);
    else row.foreign.add(`${span.pod ?? '(no pod)'}@${span.namespace ?? '(no namespace)'}`);
    byService.set(span.service, row);
  }
  const named = [...byService].filter(([, row]) => row.pods.size > 0 && row.foreign.size === 0).map(([service]) => service);
  const ok = named.includes('gateway') && named.filter((s) => s !== 'gateway').length >= others;
  const detail = [...byService]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([service, row]) =>
        `${service}: ${row.spans} spans, ${row.traces.size} traces, pods ${[...row.pods].join('+') || '-'}${row.foreign.size ? `, unknown ${[...row.foreign].join('+')}` : ''}`,
    )
    .join('; ');
  return [ok, detail || 'no span'];
}
