import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ensureKustomize } from '@mkt/infra';

const root = join(__dirname, '..', '..');
const SERVICES = ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'];
// Custom resources of the operators: their schemas are not bundled; the operators validate them.
const CUSTOM_KINDS = ['MongoDBCommunity', 'RabbitmqCluster'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; spec?: any };
const rendered: Record<string, { yaml: string; objects: K8sObject[] }> = {};

beforeAll(async () => {
  const kustomize = await ensureKustomize();
  for (const overlay of ['dev', 'prod']) {
    const yaml = execFileSync(kustomize, ['build', join(root, 'k8s', 'overlays', overlay)], { encoding: 'utf8' });
    rendered[overlay] = { yaml, objects: parseAllDocuments(yaml).map((doc) => doc.toJS() as K8sObject) };
  }
}, 300_000);

const byKind = (overlay: string, kind: string) => rendered[overlay]!.objects.filter((o) => o.kind === kind);

describe.each(['dev', 'prod'])('the %s overlay', (overlay) => {
  test('every object is valid against the official Kubernetes schemas (offline)', () => {
    const output = execFileSync(process.execPath, [join(root, 'deploy', 'validate-k8s.mjs')], {
      input: rendered[overlay]!.yaml,
      encoding: 'utf8',
      cwd: join(root, 'deploy'),
    });
    const results = output
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { kind: string; valid: boolean | null; errors: string[] });
    expect(results.length).toBe(rendered[overlay]!.objects.length);
    expect(results.filter((r) => r.valid === false)).toEqual([]);
    expect(
      results
        .filter((r) => r.valid === null)
        .map((r) => r.kind)
        .every((kind) => CUSTOM_KINDS.includes(kind)),
    ).toBe(true);
  });

  test('each service has its Deployment, Service, ServiceAccount, HPA and PodDisruptionBudget', () => {
    for (const kind of ['Deployment', 'Service', 'ServiceAccount', 'HorizontalPodAutoscaler', 'PodDisruptionBudget']) {
      expect(byKind(overlay, kind).map((o) => o.metadata.name)).toEqual(expect.arrayContaining(SERVICES));
    }
    expect(
      rendered[overlay]!.objects.every((o) => o.metadata.namespace === undefined || o.metadata.namespace.startsWith('marketplace')),
    ).toBe(true);
  });

  test('pods are hardened: non-root, read-only root file system, no privilege, resources, probes', () => {
    for (const deployment of byKind(overlay, 'Deployment')) {
      const pod = deployment.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const container of pod.containers) {
        expect(container.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(container.resources.requests).toBeDefined();
        expect(container.resources.limits).toBeDefined();
        expect(container.readinessProbe.httpGet.path).toBe('/readyz');
        expect(container.livenessProbe.httpGet.path).toBe('/healthz');
        expect(JSON.stringify(container.env)).not.toMatch(/"value":"-----BEGIN/);
      }
    }
  });

  test('only the gateway is reachable from outside; services only from the gateway', () => {
    const policies = byKind(overlay, 'NetworkPolicy');
    expect(policies.find((p) => p.metadata.name === 'default-deny-ingress')?.spec.podSelector).toEqual({});
    const gateway = policies.find((p) => p.metadata.name === 'gateway-from-ingress')!;
    expect(gateway.spec.ingress[0].from[0].namespaceSelector.matchLabels).toEqual({ 'kubernetes.io/metadata.name': 'ingress-nginx' });
    const services = policies.find((p) => p.metadata.name === 'services-from-gateway')!;
    expect(services.spec.ingress[0].from).toEqual([{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'gateway' } } }]);
    const ingresses = byKind(overlay, 'Ingress');
    expect(
      ingresses.flatMap((i) =>
        i.spec.rules.flatMap((r: { http: { paths: Array<{ backend: { service: { name: string } } }> } }) =>
          r.http.paths.map((p) => p.backend.service.name),
        ),
      ),
    ).toEqual(['gateway']);
    for (const svc of byKind(overlay, 'Service')) expect(svc.spec.type ?? 'ClusterIP').toBe('ClusterIP');
  });
});

describe('the overlays differ where they should', () => {
  test('dev runs MongoDB and RabbitMQ as StatefulSets; prod through the operators, with more replicas', () => {
    expect(
      byKind('dev', 'StatefulSet')
        .map((s) => s.metadata.name)
        .sort(),
    ).toEqual(['mongo', 'rabbitmq']);
    expect(byKind('prod', 'MongoDBCommunity')[0]!.spec.members).toBe(3);
    expect(byKind('prod', 'RabbitmqCluster')[0]!.spec.replicas).toBe(3);
    expect(byKind('prod', 'Deployment').every((d) => d.spec.replicas === 3)).toBe(true);
    expect(byKind('prod', 'PodDisruptionBudget').every((p) => p.spec.minAvailable === 2)).toBe(true);
    expect(byKind('prod', 'Secret')).toEqual([]);
  });
});

describe('payments are never a silent sandbox (issue 12)', () => {
  const config = (overlay: string) =>
    rendered[overlay]!.objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'marketplace-config') as
      { data: Record<string, string> } | undefined;

  test('prod pays through Chapa, with the sandbox refused; only dev allows the sandbox', () => {
    expect(config('prod')!.data).toMatchObject({ PAYMENT_PROVIDER: 'chapa', ALLOW_SANDBOX_PAYMENTS: 'false' });
    expect(config('prod')!.data.CHECKOUT_REDIRECT_ORIGINS).toMatch(/^https:\/\//);
    expect(config('dev')!.data).toMatchObject({ PAYMENT_PROVIDER: 'sandbox', ALLOW_SANDBOX_PAYMENTS: 'true' });
    const wallet = byKind('prod', 'Deployment').find((d) => d.metadata.name === 'wallet')!;
    const env = wallet.spec.template.spec.containers[0].env as Array<{ name: string; value?: string }>;
    expect(env.find((e) => e.name === 'NODE_ENV')?.value).toBe('production');
    expect(env.map((e) => e.name)).toEqual(expect.arrayContaining(['PAYMENT_PROVIDER', 'CHAPA_SECRET_KEY', 'CHAPA_WEBHOOK_SECRET']));
  });

  test('consultation reaches the wallet directly (paid bookings), with the shared credential', () => {
    const policy = byKind('prod', 'NetworkPolicy').find((p) => p.metadata.name === 'wallet-from-consultation')!;
    expect(policy.spec.podSelector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'wallet' });
    expect(policy.spec.ingress[0].from).toEqual([{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'consultation' } } }]);
    for (const name of ['wallet', 'consultation']) {
      const env = byKind('prod', 'Deployment').find((d) => d.metadata.name === name)!.spec.template.spec.containers[0].env as Array<{
        name: string;
        valueFrom?: { secretKeyRef?: { name: string } };
      }>;
      expect(env.find((e) => e.name === 'INTERNAL_API_TOKEN')?.valueFrom?.secretKeyRef?.name).toBe('marketplace-internal');
    }
  });

  test('compose runs the wallet in production with the provider named by whoever starts it', () => {
    const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { environment: Record<string, string> }>;
    };
    const env = compose.services.wallet!.environment;
    expect(env.NODE_ENV).toBe('production');
    expect(env.PAYMENT_PROVIDER).toMatch(/^\$\{PAYMENT_PROVIDER:\?/);
    expect(env.ALLOW_SANDBOX_PAYMENTS).toBe('${ALLOW_SANDBOX_PAYMENTS:-false}');
  });
});

describe('the gateway never runs on development defaults in production (issue 12)', () => {
  type Env = Array<{ name: string; value?: string; valueFrom?: unknown }>;
  const gatewayEnv = (overlay: string) =>
    byKind(overlay, 'Deployment').find((d) => d.metadata.name === 'gateway')!.spec.template.spec.containers[0].env as Env;

  test.each(['dev', 'prod'])(
    '%s: explicit CORS origins, one trusted proxy, the admin password from a Secret, metrics not in the Service',
    (overlay) => {
      const env = gatewayEnv(overlay);
      const value = (name: string) => env.find((e) => e.name === name)?.value;
      expect(value('CORS_ORIGINS')).toMatch(/^https?:\/\/[^*]+$/);
      expect(value('TRUST_PROXY')).toBe('1');
      expect(env.find((e) => e.name === 'ADMIN_PASSWORD')).toMatchObject({ valueFrom: { secretKeyRef: { name: 'marketplace-admin' } } });
      const service = byKind(overlay, 'Service').find((s) => s.metadata.name === 'gateway')!;
      expect(service.spec.ports.map((p: { port: number }) => p.port)).not.toContain(Number(value('METRICS_PORT')));
    },
  );

  test('compose has no default admin password and names its CORS origins', () => {
    const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { environment: Record<string, string> }>;
    };
    const env = compose.services.gateway!.environment;
    expect(env.ADMIN_PASSWORD).toMatch(/^\$\{ADMIN_PASSWORD:\?/);
    expect(env.CORS_ORIGINS).not.toContain('*');
  });
});

describe('docker-compose.yml', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, any> };

  test('runs MongoDB, RabbitMQ, the five services and the gateway, each with a health check', () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      'catalog',
      'consultation',
      'crm',
      'gateway',
      'mongo',
      'rabbitmq',
      'review',
      'wallet',
    ]);
    for (const service of Object.values(compose.services)) expect(service.healthcheck?.test).toBeDefined();
  });

  test('publishes only the gateway and starts each service after what it needs is healthy', () => {
    const published = Object.entries(compose.services)
      .filter(([, s]) => s.ports)
      .map(([name]) => name);
    expect(published).toEqual(['gateway']);
    for (const name of SERVICES) {
      const service = compose.services[name];
      expect(service.build.args.SERVICE).toBe(name);
      expect(service.depends_on.mongo.condition).toBe('service_healthy');
      expect(service.depends_on.rabbitmq.condition).toBe('service_healthy');
      expect(service.read_only).toBe(true);
    }
    for (const name of SERVICES.slice(1)) expect(compose.services.gateway.depends_on[name].condition).toBe('service_healthy');
  });
});
