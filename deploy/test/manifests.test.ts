import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { busPermissions } from '@mkt/infra';

// deploy/check-k8s.mjs renders the overlays (kustomize) and checks them offline: kubeconform -strict
// against the Kubernetes schemas and the operators' CRD schemas, and kube-score. It installs its
// pinned tools into .tools/ the first time (a few minutes of `go install`), later runs take seconds.
const root = join(__dirname, '..', '..');
const SERVICES = ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'];
const OVERLAYS = ['dev', 'prod'] as const;
const NAMESPACE = { dev: 'marketplace-dev', prod: 'marketplace' } as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; spec?: any };
type Conform = { kind: string; name: string; status: string; msg: string; errors: string[] };
type Finding = { object: string; check: string; grade: string; comments: string[] };
type Checked = { yaml: string; objects: number; kubeconform: Conform[]; kubeScore: Finding[]; rules: string[] };

const checkK8s = (...args: string[]) =>
  (
    JSON.parse(
      execFileSync(process.execPath, [join(root, 'deploy', 'check-k8s.mjs'), '--json', ...args], {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    ) as { results: Record<string, Checked> }
  ).results;

const rendered: Record<string, { yaml: string; objects: K8sObject[]; checked: Checked }> = {};

beforeAll(() => {
  const results = checkK8s();
  for (const overlay of OVERLAYS) {
    const checked = results[overlay]!;
    rendered[overlay] = { yaml: checked.yaml, objects: parseAllDocuments(checked.yaml).map((doc) => doc.toJS() as K8sObject), checked };
  }
}, 900_000);

const byKind = (overlay: string, kind: string) => rendered[overlay]!.objects.filter((o) => o.kind === kind);
const one = (overlay: string, kind: string, name: string) => byKind(overlay, kind).find((o) => o.metadata.name === name)!;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const container = (overlay: string, name: string): any => one(overlay, 'Deployment', name).spec.template.spec.containers[0];
const envOf = (overlay: string, name: string) =>
  container(overlay, name).env as Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;

type Allowed = { check: string; overlays: string[]; objects: string[] };
const allowList = parse(readFileSync(join(root, 'k8s', 'kube-score-allow.yaml'), 'utf8')) as Allowed[];
const allows = (entry: Allowed, overlay: string, finding: Finding) =>
  entry.check === finding.check &&
  entry.overlays.includes(overlay) &&
  entry.objects.some(
    (pattern) => pattern === finding.object || (pattern.endsWith('/*') && finding.object.startsWith(pattern.slice(0, -1))),
  );

describe.each(OVERLAYS)('the %s overlay', (overlay) => {
  test("kubeconform -strict: every object valid against the Kubernetes 1.33 and the operators' CRD schemas", () => {
    const { checked, objects } = rendered[overlay]!;
    expect(checked.kubeconform).toHaveLength(objects.length);
    expect(checked.kubeconform.filter((r) => r.status !== 'valid')).toEqual([]);
  });

  test('kube-score: nothing CRITICAL or WARNING beyond the justified exceptions, and no stale exception', () => {
    const findings = rendered[overlay]!.checked.kubeScore;
    expect(findings.filter((f) => !allowList.some((entry) => allows(entry, overlay, f)))).toEqual([]);
    for (const entry of allowList.filter((e) => e.overlays.includes(overlay))) {
      expect({ entry, used: findings.some((f) => allows(entry, overlay, f)) }).toEqual({ entry, used: true });
    }
  });

  test('each service has its Deployment, Service, ServiceAccount, HPA and PodDisruptionBudget', () => {
    for (const kind of ['Deployment', 'Service', 'ServiceAccount', 'HorizontalPodAutoscaler', 'PodDisruptionBudget']) {
      expect(byKind(overlay, kind).map((o) => o.metadata.name)).toEqual(expect.arrayContaining(SERVICES));
    }
    expect(
      rendered[overlay]!.objects.every((o) => o.metadata.namespace === undefined || o.metadata.namespace.startsWith('marketplace')),
    ).toBe(true);
  });

  test('pods are hardened: non-root, read-only root file system, no privilege, resources, pinned images', () => {
    const podOf = (workload: K8sObject) => (workload.kind === 'CronJob' ? workload.spec.jobTemplate.spec : workload.spec).template.spec;
    for (const workload of [
      ...byKind(overlay, 'Deployment'),
      ...byKind(overlay, 'StatefulSet'),
      ...byKind(overlay, 'Job'),
      ...byKind(overlay, 'CronJob'),
    ]) {
      const pod = podOf(workload);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const c of pod.containers) {
        expect(c.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        for (const bound of ['requests', 'limits']) {
          expect(Object.keys(c.resources[bound]).sort()).toEqual(['cpu', 'ephemeral-storage', 'memory']);
        }
        // A version, never :latest nor untagged; a published release's image also by its digest.
        expect(c.image).toMatch(/:[0-9][\w.-]*(@sha256:[0-9a-f]{64})?$/);
        expect(JSON.stringify(c.env ?? [])).not.toMatch(/"value":"-----BEGIN/);
      }
      // The only writable place, bounded.
      expect(pod.volumes.find((v: { name: string }) => v.name === 'tmp')).toMatchObject({ emptyDir: { sizeLimit: expect.any(String) } });
    }
  });

  test('each service has a migrate Job before its rollout: its image and environment, `dist/migrate.js up`, a PreSync hook', () => {
    for (const name of SERVICES) {
      const job = one(overlay, 'Job', `${name}-migrate`);
      const c = job.spec.template.spec.containers[0];
      expect(c.command).toEqual(['node', 'dist/migrate.js', 'up']);
      expect(c.image).toBe(container(overlay, name).image);
      expect(c.imagePullPolicy).toBe(container(overlay, name).imagePullPolicy);
      expect(c.env).toEqual(envOf(overlay, name));
      expect(job.spec.template.spec.restartPolicy).toBe('Never');
      expect(job.spec.template.spec.serviceAccountName).toBe(name);
      expect(job.metadata).toMatchObject({ annotations: { 'argocd.argoproj.io/hook': 'PreSync' } });
      // Not a serving pod: no Service, HPA or tier policy selects it.
      expect(job.spec.template.metadata.labels).toMatchObject({ 'app.kubernetes.io/component': 'migrations' });
      expect(job.spec.template.metadata.labels['marketplace/tier']).toBeUndefined();
    }
  });

  test('probes: startup and liveness on the process (/healthz), readiness on /readyz; SIGTERM drains before the kubelet kills', () => {
    for (const deployment of byKind(overlay, 'Deployment')) {
      const pod = deployment.spec.template.spec;
      const c = pod.containers[0];
      expect(c.startupProbe.httpGet.path).toBe('/healthz');
      expect(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold).toBeGreaterThanOrEqual(120);
      expect(c.livenessProbe.httpGet.path).toBe('/healthz');
      expect(c.livenessProbe.initialDelaySeconds ?? 0).toBe(0); // the startup probe holds liveness back
      expect(c.readinessProbe.httpGet.path).toBe('/readyz');
      const env = Object.fromEntries((c.env as Array<{ name: string; value?: string }>).map((e) => [e.name, e.value]));
      const preStop = c.lifecycle.preStop.sleep.seconds as number;
      const grace = Number(env.SHUTDOWN_GRACE_MS) / 1000;
      const timeout = Number(env.SHUTDOWN_TIMEOUT_MS) / 1000;
      expect(preStop).toBeGreaterThan(0);
      expect(grace).toBeGreaterThan(0);
      expect(timeout).toBeGreaterThan(grace);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(preStop + grace + timeout);
    }
  });

  test('the HPA owns the replica count; pods spread over nodes and zones', () => {
    for (const deployment of byKind(overlay, 'Deployment')) {
      expect(deployment.spec.replicas).toBeUndefined();
      const hpa = byKind(overlay, 'HorizontalPodAutoscaler').find((h) => h.spec.scaleTargetRef.name === deployment.metadata.name)!;
      expect(hpa.spec.scaleTargetRef.kind).toBe('Deployment');
      const spread = deployment.spec.template.spec.topologySpreadConstraints as Array<{ topologyKey: string; labelSelector: unknown }>;
      expect(spread.map((s) => s.topologyKey).sort()).toEqual(['kubernetes.io/hostname', 'topology.kubernetes.io/zone']);
      for (const s of spread) expect(s.labelSelector).toEqual({ matchLabels: deployment.spec.selector.matchLabels });
    }
  });

  test('only the gateway is reachable from outside (dev: an Ingress; prod: Gateway API routes); every Service is ClusterIP', () => {
    const policies = byKind(overlay, 'NetworkPolicy');
    expect(policies.find((p) => p.metadata.name === 'default-deny')?.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    const ingressBackends = byKind(overlay, 'Ingress').flatMap((i) =>
      i.spec.rules.flatMap((r: { http: { paths: Array<{ backend: { service: { name: string } } }> } }) =>
        r.http.paths.map((p) => p.backend.service.name),
      ),
    );
    const routeBackends = byKind(overlay, 'HTTPRoute').flatMap((route) =>
      route.spec.rules.flatMap((rule: { backendRefs?: Array<{ name: string; port: number }> }) => rule.backendRefs ?? []),
    );
    if (overlay === 'dev') {
      expect(ingressBackends).toEqual(['gateway']);
      expect(routeBackends).toEqual([]);
    } else {
      expect(ingressBackends).toEqual([]);
      expect(routeBackends).toEqual([{ name: 'gateway', port: 8080 }]);
    }
    for (const svc of byKind(overlay, 'Service')) expect(svc.spec.type ?? 'ClusterIP').toBe('ClusterIP');
  });
});

// NetworkPolicy semantics, small: does a connection from one pod to another pass both the source's
// egress and the destination's ingress policies of the marketplace's namespace?
type Pod = { ns: string; labels: Record<string, string> };
type Selector = { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values: string[] }> };
type Peer = { podSelector?: Selector; namespaceSelector?: Selector; ipBlock?: unknown };
type Rule = { from?: Peer[]; to?: Peer[]; ports?: Array<{ port: number; endPort?: number; protocol?: string }> };

const matches = (selector: Selector, labels: Record<string, string>) =>
  Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v) &&
  (selector.matchExpressions ?? []).every((e) => e.operator === 'In' && e.values.includes(labels[e.key]!));
const peerMatches = (peer: Peer, pod: Pod, policyNs: string) => {
  if (peer.ipBlock) return false;
  const nsOk = peer.namespaceSelector ? matches(peer.namespaceSelector, { 'kubernetes.io/metadata.name': pod.ns }) : pod.ns === policyNs;
  return nsOk && (peer.podSelector ? matches(peer.podSelector, pod.labels) : true);
};
const portMatches = (rule: Rule, port: number) =>
  !rule.ports ||
  rule.ports.some((p) => (p.protocol ?? 'TCP') === 'TCP' && (p.endPort ? port >= p.port && port <= p.endPort : port === p.port));

function allowed(overlay: (typeof OVERLAYS)[number], from: Pod, to: Pod, port: number): boolean {
  const ns = NAMESPACE[overlay];
  const policies = byKind(overlay, 'NetworkPolicy');
  const side = (pod: Pod, type: 'Ingress' | 'Egress', other: Pod) => {
    if (pod.ns !== ns) return true; // outside the marketplace's namespace: not ours to police
    const selecting = policies.filter((p) => p.spec.policyTypes.includes(type) && matches(p.spec.podSelector, pod.labels));
    if (selecting.length === 0) return true;
    const key = type === 'Ingress' ? 'ingress' : 'egress';
    const peers = type === 'Ingress' ? 'from' : 'to';
    return selecting.some((p) =>
      ((p.spec[key] ?? []) as Rule[]).some(
        (rule) => portMatches(rule, port) && (!rule[peers] || rule[peers]!.some((peer) => peerMatches(peer, other, ns))),
      ),
    );
  };
  return side(from, 'Egress', to) && side(to, 'Ingress', from);
}

describe.each(OVERLAYS)("the %s overlay's network, as NetworkPolicies allow it", (overlay) => {
  const ns = NAMESPACE[overlay];
  const app = (name: string): Pod => ({ ns, labels: one(overlay, 'Deployment', name).spec.template.metadata.labels });
  const dns: Pod = { ns: 'kube-system', labels: { 'k8s-app': 'kube-dns' } };
  // The edge's proxies (dev: the ingress controller; prod: the Gateway's), in the params' edge-namespace.
  const params = (parse(readFileSync(join(root, 'k8s', 'overlays', overlay, 'params.yaml'), 'utf8')) as { data: Record<string, string> })
    .data;
  const ingressController: Pod = { ns: params['edge-namespace']!, labels: { 'app.kubernetes.io/name': 'edge-proxy' } };
  const prometheus: Pod = { ns: 'monitoring', labels: { 'app.kubernetes.io/name': 'prometheus' } };
  const stranger: Pod = { ns: 'default', labels: { app: 'stranger' } };
  const port = (name: string) => Number(envOf(overlay, name).find((e) => e.name === 'PORT')!.value);
  // The data pods, labelled as whoever makes them labels them: the dev StatefulSets; in prod the
  // operators (mongodb-kubernetes: app=<name>-svc; cluster-operator: app.kubernetes.io/name=<name>,
  // component=rabbitmq, part-of=rabbitmq — read from their sources).
  const data = () => {
    if (overlay === 'dev') {
      const labels = (name: string) => one('dev', 'StatefulSet', name).spec.template.metadata.labels;
      return { mongo: [{ ns, labels: labels('mongo') }], rabbit: [{ ns, labels: labels('rabbitmq') }] };
    }
    const mdbc = byKind('prod', 'MongoDBCommunity')[0]!.metadata.name;
    const rmq = byKind('prod', 'RabbitmqCluster')[0]!.metadata.name;
    const mongo = { ns, labels: { app: `${mdbc}-svc` } };
    const rabbit = {
      ns,
      labels: { 'app.kubernetes.io/name': rmq, 'app.kubernetes.io/component': 'rabbitmq', 'app.kubernetes.io/part-of': 'rabbitmq' },
    };
    return { mongo: [mongo, { ...mongo }], rabbit: [rabbit, { ...rabbit }] };
  };

  test('the ingress controller reaches the gateway and nothing else; strangers reach nothing', () => {
    expect(allowed(overlay, ingressController, app('gateway'), 8080)).toBe(true);
    for (const name of SERVICES.slice(1)) {
      expect(allowed(overlay, ingressController, app(name), port(name))).toBe(false);
      expect(allowed(overlay, stranger, app(name), port(name))).toBe(false);
    }
    expect(allowed(overlay, stranger, app('gateway'), 8080)).toBe(false);
  });

  test('the operations Jobs of k8s/jobs/ run here: their ServiceAccount exists, they reach MongoDB and RabbitMQ and no service', () => {
    const sa = one(overlay, 'ServiceAccount', 'marketplace-tools');
    expect(sa).toMatchObject({ automountServiceAccountToken: false });
    const ops: Pod = { ns, labels: { 'app.kubernetes.io/name': 'marketplace-dlq', 'marketplace/tier': 'ops' } };
    const { mongo, rabbit } = data();
    expect(allowed(overlay, ops, rabbit[0]!, 5672)).toBe(true);
    expect(allowed(overlay, ops, mongo[0]!, 27017)).toBe(true);
    for (const name of SERVICES.slice(1)) expect(allowed(overlay, ops, app(name), port(name))).toBe(false);
    expect(allowed(overlay, ops, app('gateway'), 8080)).toBe(false);
  });

  test("every service reaches the gateway's JWKS port; strangers do not", () => {
    for (const name of SERVICES.slice(1)) expect(allowed(overlay, app(name), app('gateway'), 8080)).toBe(true);
    expect(allowed(overlay, stranger, app('gateway'), 8080)).toBe(false);
  });

  test('the gateway reaches every service; consultation reaches the wallet; no other service-to-service path', () => {
    for (const name of SERVICES.slice(1)) expect(allowed(overlay, app('gateway'), app(name), port(name))).toBe(true);
    expect(allowed(overlay, app('consultation'), app('wallet'), 8081)).toBe(true);
    expect(allowed(overlay, app('catalog'), app('wallet'), 8081)).toBe(false);
    expect(allowed(overlay, app('wallet'), app('consultation'), 8084)).toBe(false);
  });

  test('every pod resolves names; the gateway and the services reach MongoDB and RabbitMQ (prod: AMQP over TLS, 5671 only)', () => {
    const { mongo, rabbit } = data();
    const [amqp, plain] = overlay === 'prod' ? [5671, 5672] : [5672, 5671];
    for (const name of SERVICES) {
      expect(allowed(overlay, app(name), dns, 53)).toBe(true);
      expect(allowed(overlay, app(name), mongo[0]!, 27017)).toBe(true);
      expect(allowed(overlay, app(name), rabbit[0]!, amqp)).toBe(true);
      expect(allowed(overlay, app(name), rabbit[0]!, plain)).toBe(false);
    }
    expect(allowed(overlay, stranger, mongo[0]!, 27017)).toBe(false);
    expect(allowed(overlay, stranger, rabbit[0]!, amqp)).toBe(false);
  });

  test('each migrate Job resolves names and reaches MongoDB, and nothing else; nothing reaches it', () => {
    const { mongo, rabbit } = data();
    for (const name of SERVICES) {
      const job: Pod = { ns, labels: one(overlay, 'Job', `${name}-migrate`).spec.template.metadata.labels };
      expect(allowed(overlay, job, dns, 53)).toBe(true);
      expect(allowed(overlay, job, mongo[0]!, 27017)).toBe(true);
      expect(allowed(overlay, job, rabbit[0]!, 5672)).toBe(false);
      expect(allowed(overlay, job, app('wallet'), 8081)).toBe(false);
      expect(allowed(overlay, app('gateway'), job, 8080)).toBe(false);
    }
  });

  test("Prometheus (namespace monitoring) scrapes each service's HTTP port and the gateway's metrics port only", () => {
    for (const name of SERVICES.slice(1)) expect(allowed(overlay, prometheus, app(name), port(name))).toBe(true);
    const metricsPort = Number(envOf(overlay, 'gateway').find((e) => e.name === 'METRICS_PORT')!.value);
    expect(allowed(overlay, prometheus, app('gateway'), metricsPort)).toBe(true);
    expect(allowed(overlay, prometheus, app('gateway'), 8080)).toBe(false);
  });

  if (overlay === 'prod') {
    test('the replica set members reach each other, the RabbitMQ nodes cluster, the operators reach their pods', () => {
      const { mongo, rabbit } = data();
      expect(allowed('prod', mongo[0]!, mongo[1]!, 27017)).toBe(true);
      for (const p of [4369, 25672, 5672, 15672, 35672]) expect(allowed('prod', rabbit[0]!, rabbit[1]!, p)).toBe(true);
      const rabbitOperator: Pod = { ns: 'rabbitmq-system', labels: { 'app.kubernetes.io/name': 'rabbitmq-cluster-operator' } };
      const mongoOperator: Pod = {
        ns: 'mongodb',
        labels: { 'app.kubernetes.io/name': 'mongodb-kubernetes-operator', 'app.kubernetes.io/component': 'controller' },
      };
      expect(allowed('prod', rabbitOperator, rabbit[0]!, 15672)).toBe(true);
      expect(allowed('prod', mongoOperator, mongo[0]!, 27017)).toBe(true);
      expect(allowed('prod', prometheus, rabbit[0]!, 15692)).toBe(true);
      // The MongoDB agent's metrics endpoint (spec.prometheus), and nothing else of a member.
      expect(allowed('prod', prometheus, mongo[0]!, 9216)).toBe(true);
      expect(allowed('prod', prometheus, mongo[0]!, 27017)).toBe(false);
      expect(allowed('prod', app('catalog'), mongo[0]!, 9216)).toBe(false);
      // A service is no cluster member.
      expect(allowed('prod', app('catalog'), rabbit[0]!, 25672)).toBe(false);
    });

    test('the wallet (the payment provider) and the operations Jobs (S3-compatible storage), alone, reach outside on 443', () => {
      const egress = byKind('prod', 'NetworkPolicy').filter(
        (p) => p.spec.policyTypes.includes('Egress') && (p.spec.egress ?? []).some((r: Rule) => r.to?.some((peer) => peer.ipBlock)),
      );
      expect(egress.map((p) => p.spec.podSelector)).toEqual(
        expect.arrayContaining([{ matchLabels: { 'app.kubernetes.io/name': 'wallet' } }, { matchLabels: { 'marketplace/tier': 'ops' } }]),
      );
      expect(egress).toHaveLength(2);
      for (const policy of egress)
        expect(policy.spec.egress.filter((r: Rule) => r.to?.some((peer) => peer.ipBlock)).flatMap((r: Rule) => r.ports)).toEqual([
          { protocol: 'TCP', port: 443 },
        ]);
    });

    test('the operations Jobs (backup, restore, dlq, migrate-queues) reach MongoDB and RabbitMQ, and no service', () => {
      const { mongo, rabbit } = data();
      const ops: Pod = { ns, labels: one('prod', 'CronJob', 'marketplace-backup').spec.jobTemplate.spec.template.metadata.labels };
      expect(allowed('prod', ops, dns, 53)).toBe(true);
      expect(allowed('prod', ops, mongo[0]!, 27017)).toBe(true);
      expect(allowed('prod', ops, rabbit[0]!, 5672)).toBe(true);
      for (const name of SERVICES) expect(allowed('prod', ops, app(name), port(name))).toBe(false);
      expect(allowed('prod', ops, rabbit[0]!, 25672)).toBe(false);
    });
  }
});

describe('prod: TLS in transit to MongoDB and RabbitMQ (components/data-tier-tls)', () => {
  const CA_FILE = '/etc/marketplace/data-tier-ca/ca.crt';

  test("cert-manager: the data tier CA (self-signed root by default), its Issuer, the servers' certificates", () => {
    const issuers = Object.fromEntries(byKind('prod', 'Issuer').map((i) => [i.metadata.name, i.spec]));
    expect(issuers['marketplace-data-tier-root']).toEqual({ selfSigned: {} });
    expect(issuers['marketplace-data-tier']).toEqual({ ca: { secretName: 'marketplace-data-tier-ca' } });
    expect(one('prod', 'Certificate', 'marketplace-data-tier-ca').spec).toMatchObject({
      isCA: true,
      secretName: 'marketplace-data-tier-ca',
      issuerRef: { kind: 'Issuer', name: 'marketplace-data-tier-root' },
    });
    const mongo = one('prod', 'Certificate', 'marketplace-mongo-tls').spec;
    expect(mongo).toMatchObject({ secretName: 'marketplace-mongo-tls', issuerRef: { kind: 'Issuer', name: 'marketplace-data-tier' } });
    // The members' host names of the operator's connection strings.
    expect(mongo.dnsNames).toContain(`*.marketplace-mongo-svc.${NAMESPACE.prod}.svc.cluster.local`);
    const rabbit = one('prod', 'Certificate', 'marketplace-rabbitmq-tls').spec;
    expect(rabbit).toMatchObject({ secretName: 'marketplace-rabbitmq-tls', issuerRef: { kind: 'Issuer', name: 'marketplace-data-tier' } });
    expect(rabbit.dnsNames).toContain('marketplace-rabbitmq');
    expect(byKind('dev', 'Certificate')).toEqual([]);
  });

  test('the replica set and the RabbitMQ cluster serve TLS with those certificates', () => {
    expect(byKind('prod', 'MongoDBCommunity')[0]!.spec.security.tls).toMatchObject({
      enabled: true,
      // Required: a plain connection is refused (every client below carries the CA).
      optional: false,
      certificateKeySecretRef: { name: 'marketplace-mongo-tls' },
      caCertificateSecretRef: { name: 'marketplace-data-tier-ca' },
    });
    expect(byKind('prod', 'RabbitmqCluster')[0]!.spec.tls).toEqual({ secretName: 'marketplace-rabbitmq-tls' });
  });

  test("every Deployment and migrate Job verifies both against the CA, mounted alone (never the CA's key)", () => {
    const pods = [
      ...byKind('prod', 'Deployment').map((d) => d.spec.template.spec),
      ...byKind('prod', 'Job').map((j) => j.spec.template.spec),
    ];
    expect(pods).toHaveLength(2 * SERVICES.length);
    for (const pod of pods) {
      const c = pod.containers[0];
      const env = Object.fromEntries(c.env.map((e: { name: string }) => [e.name, e]));
      expect(env.MONGO_TLS_CA_FILE).toEqual({ name: 'MONGO_TLS_CA_FILE', value: CA_FILE });
      expect(env.AMQP_TLS_CA_FILE).toEqual({ name: 'AMQP_TLS_CA_FILE', value: CA_FILE });
      expect(env.AMQP_URL.valueFrom.secretKeyRef.key).toBe('tls-url');
      expect(c.volumeMounts).toContainEqual({ name: 'data-tier-ca', mountPath: '/etc/marketplace/data-tier-ca', readOnly: true });
      expect(pod.volumes.find((v: { name: string }) => v.name === 'data-tier-ca')).toEqual({
        name: 'data-tier-ca',
        secret: { secretName: 'marketplace-data-tier-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] },
      });
    }
    for (const name of SERVICES) expect(envOf('dev', name).some((e) => e.name.endsWith('_TLS_CA_FILE'))).toBe(false);
  });

  test('every MongoDB client of the prod render and of k8s/jobs/ connects with TLS, verified against the CA mounted alone', () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    type PodTemplate = { containers: any[]; initContainers?: any[]; volumes?: any[] };
    const templates = ['restore', 'dlq', 'migrate-queues'].flatMap((name) =>
      parseAllDocuments(readFileSync(join(root, 'k8s', 'jobs', `${name}.yaml`), 'utf8')).map((doc) => doc.toJS() as K8sObject),
    );
    const pods: Array<[string, PodTemplate]> = [
      ...rendered.prod!.objects.flatMap((o): Array<[string, PodTemplate]> => {
        if (o.kind === 'CronJob') return [[`CronJob/${o.metadata.name}`, o.spec.jobTemplate.spec.template.spec]];
        if (['Deployment', 'Job', 'StatefulSet', 'DaemonSet'].includes(o.kind))
          return [[`${o.kind}/${o.metadata.name}`, o.spec.template.spec]];
        return [];
      }),
      ...templates.map((job): [string, PodTemplate] => [`k8s/jobs Job/${job.metadata.name}`, job.spec.template.spec]),
    ];
    const clients: string[] = [];
    for (const [name, pod] of pods) {
      for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
        const env = (c.env ?? []) as Array<{ name: string; value?: string }>;
        if (!env.some((e) => /(^|_)MONGO_URL$/.test(e.name))) continue;
        clients.push(`${name} ${c.name}`);
        // A literal URL never turns TLS off; the operator's connection strings say ssl=true.
        for (const e of env.filter((v) => /MONGO_URL$/.test(v.name) && v.value)) expect(e.value).not.toMatch(/(tls|ssl)=false/);
        // MONGO_TLS_CA_FILE set: the connection is TLS (tls: true), verified against that file (kit's rule).
        expect({ client: `${name} ${c.name}`, ca: env.find((e) => e.name === 'MONGO_TLS_CA_FILE')?.value }).toEqual({
          client: `${name} ${c.name}`,
          ca: CA_FILE,
        });
        const mount = (c.volumeMounts ?? []).find((m: { mountPath: string }) => m.mountPath === '/etc/marketplace/data-tier-ca');
        expect(mount).toMatchObject({ readOnly: true });
        expect(pod.volumes!.find((v: { name: string }) => v.name === mount.name)).toEqual({
          name: mount.name,
          secret: { secretName: 'marketplace-data-tier-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] },
        });
      }
    }
    // Every service and its migrate Job, the backup CronJob and the restore template: none missed by the search.
    expect(clients).toHaveLength(2 * SERVICES.length + 2);
    expect(clients).toEqual(expect.arrayContaining(['CronJob/marketplace-backup backup', 'k8s/jobs Job/marketplace-restore restore']));
  });

  test("the backup CronJob verifies MongoDB's certificate against the same CA, mounted alone", () => {
    const pod = one('prod', 'CronJob', 'marketplace-backup').spec.jobTemplate.spec.template.spec;
    const c = pod.containers[0];
    expect(c.env).toContainEqual({ name: 'MONGO_TLS_CA_FILE', value: CA_FILE });
    expect(c.volumeMounts).toContainEqual({ name: 'data-tier-ca', mountPath: '/etc/marketplace/data-tier-ca', readOnly: true });
    expect(pod.volumes).toContainEqual({
      name: 'data-tier-ca',
      secret: { secretName: 'marketplace-data-tier-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] },
    });
  });
});

describe('backups and operations Jobs run the tools image (marketplace-tools)', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const backupPod = (): any => one('prod', 'CronJob', 'marketplace-backup').spec.jobTemplate.spec.template.spec;

  test('prod: the CronJob dumps hourly, one run at a time, to the backup volume, encrypted for the Secret’s recipients, with retention', () => {
    const cron = one('prod', 'CronJob', 'marketplace-backup');
    expect(cron.metadata.namespace).toBe('marketplace');
    expect(cron.spec).toMatchObject({ concurrencyPolicy: 'Forbid', startingDeadlineSeconds: expect.any(Number) });
    expect(cron.spec.schedule).toMatch(/^\d+ \* \* \* \*$/);
    const pod = backupPod();
    const c = pod.containers[0];
    // From the params' registry (prod's own replacement).
    expect(c.image).toMatch(/^[\w.:-]+(\/[\w.-]+)*\/marketplace-tools:[0-9]/);
    expect(c.args.slice(0, 1)).toEqual(['backup']);
    expect(c.args).toEqual(expect.arrayContaining(['--keep', '--keep-days', '--s3-keep-days']));
    const env = Object.fromEntries(
      (
        c.env as Array<{ name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string; optional?: boolean } } }>
      ).map((e) => [e.name, e.value ?? e.valueFrom!.secretKeyRef]),
    );
    expect(env.MONGO_URL).toEqual({ name: 'marketplace-mongo-backup', key: 'connectionString.standard' });
    expect(env.BACKUP_AGE_RECIPIENTS).toEqual({ name: 'marketplace-backup-age', key: 'recipients' });
    for (const name of ['BACKUP_S3_BUCKET', 'BACKUP_S3_ENDPOINT', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'])
      expect(env[name]).toMatchObject({ name: 'marketplace-backup-s3', optional: true });
    const backupRoot = env.BACKUP_ROOT as string;
    const mount = c.volumeMounts.find((m: { mountPath: string }) => m.mountPath === backupRoot);
    const volume = pod.volumes.find((v: { name: string }) => v.name === mount.name);
    const claim = one('prod', 'PersistentVolumeClaim', volume.persistentVolumeClaim.claimName);
    expect(claim.spec.resources.requests.storage).toMatch(/Gi$/);
    expect(pod.securityContext.fsGroup).toBe(10001); // the volume is writable by the image's user
    // The `backup` user reads every database and writes none.
    const users = byKind('prod', 'MongoDBCommunity')[0]!.spec.users as Array<{ name: string; roles: Array<{ name: string; db: string }> }>;
    expect(users.find((u) => u.name === 'backup')!.roles).toEqual([{ name: 'backup', db: 'admin' }]);
    expect(byKind('dev', 'CronJob')).toEqual([]);
  });

  test('k8s/jobs/ (restore, dlq, migrate-queues): valid against the 1.33 schemas, hardened, scored as the workloads', () => {
    const files = ['restore', 'dlq', 'migrate-queues'].map((name) => join(root, 'k8s', 'jobs', `${name}.yaml`));
    const jobs = files.flatMap((file) => parseAllDocuments(readFileSync(file, 'utf8')).map((doc) => doc.toJS() as K8sObject));
    // No namespace of their own: the runbook's `kubectl -n <namespace>` decides (dev, ci or prod).
    expect(jobs.map((job) => [job.kind, job.metadata.namespace])).toEqual(Array(3).fill(['Job', undefined]));
    // Checked beside the prod overlay they run in: its NetworkPolicies select them.
    const dir = mkdtempSync(join(tmpdir(), 'k8s-jobs-'));
    const file = join(dir, 'prod-and-jobs.yaml');
    // In the overlay's namespace, as `kubectl -n marketplace create -f` puts them.
    const placed = jobs.map((job) => stringify({ ...job, metadata: { ...job.metadata, namespace: 'marketplace' } }));
    writeFileSync(file, [rendered.prod!.yaml, ...placed].join('\n---\n'));
    const checked = checkK8s('--file', file)[file]!;
    expect(checked.kubeconform.filter((r) => r.status !== 'valid')).toEqual([]);
    const jobFindings = checked.kubeScore.filter((f) => f.object.startsWith('Job/'));
    expect(jobFindings.filter((f) => f.check !== 'container-security-context-user-group-id')).toEqual([]);
    for (const job of jobs) {
      const pod = job.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.serviceAccountName).toBe(backupPod().serviceAccountName);
      expect(job.spec.template.metadata.labels['marketplace/tier']).toBe('ops');
      for (const c of pod.containers) {
        // The same image, the registry left to whoever applies the template (k8s/README.md).
        expect(c.image).toBe(backupPod().containers[0].image.replace(/^.*\/(?=marketplace-tools:)/, ''));
        expect(c.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(c.args[0]).toBe(job.metadata.name.replace(/^marketplace-/, ''));
      }
    }
  }, 300_000);
});

describe.each(OVERLAYS)('the %s overlay: signing keys', (overlay) => {
  test('the gateway reads its key set from the whole Secret (no subPath: its updates reach the pod); the services verify by the JWKS', () => {
    const gateway = container(overlay, 'gateway');
    const dir = envOf(overlay, 'gateway').find((e) => e.name === 'JWT_KEYS_DIR')?.value;
    expect(dir).toBe('/etc/marketplace/jwt-keys');
    expect(envOf(overlay, 'gateway').some((e) => e.name === 'JWT_PRIVATE_KEY' || e.name === 'JWT_PUBLIC_KEY')).toBe(false);
    const mount = gateway.volumeMounts.find((m: { mountPath: string }) => m.mountPath === dir);
    expect(mount).toMatchObject({ readOnly: true });
    expect(mount.subPath).toBeUndefined();
    const volume = one(overlay, 'Deployment', 'gateway').spec.template.spec.volumes.find((v: { name: string }) => v.name === mount.name);
    expect(volume.secret.secretName).toBe('marketplace-jwt');
    for (const name of SERVICES.slice(1)) {
      expect(envOf(overlay, name).find((e) => e.name === 'JWT_JWKS_URL')?.value).toBe('http://gateway:8080/v1/auth/.well-known/jwks.json');
      expect(envOf(overlay, name).some((e) => e.name === 'JWT_PUBLIC_KEY')).toBe(false);
    }
  });
});

describe('the overlays differ where they should', () => {
  test('dev runs MongoDB and RabbitMQ as StatefulSets; prod through the operators, with more replicas', () => {
    expect(
      byKind('dev', 'StatefulSet')
        .map((s) => s.metadata.name)
        .sort(),
    ).toEqual(['mongo', 'rabbitmq']);
    expect(byKind('prod', 'MongoDBCommunity')[0]!.spec).toMatchObject({ members: 3, type: 'ReplicaSet' });
    expect(byKind('prod', 'RabbitmqCluster')[0]!.spec.replicas).toBe(3);
    expect(byKind('prod', 'RabbitmqCluster')[0]!.spec.image).toMatch(/^rabbitmq:4\.\d+\.\d+-management$/);
    expect(container('dev', 'wallet').image).not.toMatch(/:latest$/);
    expect(byKind('prod', 'HorizontalPodAutoscaler').every((h) => h.spec.minReplicas === 3)).toBe(true);
    // The services' budgets; the data tier's keep maxUnavailable: 1 (deploy/test/cluster-params.test.ts).
    const budgets = byKind('prod', 'PodDisruptionBudget').filter(
      (p) => p.metadata.name !== 'marketplace-mongo' && p.metadata.name !== 'marketplace-rabbitmq',
    );
    expect(budgets.every((p) => p.spec.minAvailable === 2)).toBe(true);
    expect(byKind('prod', 'Secret')).toEqual([]);
  });

  test("prod: each service's MONGO_URL is its own database user's connection string, its AMQP_URL its own broker user's", () => {
    const mdbc = byKind('prod', 'MongoDBCommunity')[0]!;
    for (const name of SERVICES) {
      const env = envOf('prod', name);
      const user = mdbc.spec.users.find((u: { name: string }) => u.name === name);
      // Its own database, and only that one.
      expect(user.roles).toEqual([{ name: 'readWrite', db: name }]);
      expect(env.find((e) => e.name === 'MONGO_URL')?.valueFrom?.secretKeyRef).toEqual({
        name: user.connectionStringSecretName,
        key: 'connectionString.standard',
      });
      // amqps:// (components/data-tier-tls): the Secret's tls-url.
      expect(env.find((e) => e.name === 'AMQP_URL')?.valueFrom?.secretKeyRef).toEqual({ name: `marketplace-amqp-${name}`, key: 'tls-url' });
    }
    // Besides: the operations users, used by no service (backup reads every database; restore writes them).
    expect(mdbc.spec.users.map((u: { name: string }) => u.name).sort()).toEqual([...SERVICES, 'backup', 'restore'].sort());
    for (const name of SERVICES)
      for (const other of ['marketplace-mongo-backup', 'marketplace-mongo-restore'])
        expect(JSON.stringify(envOf('prod', name))).not.toContain(`"${other}"`);
  });

  test('prod: a RabbitMQ user per service, whose permissions are busPermissions (only its own events on the exchange)', () => {
    const users = byKind('prod', 'User');
    const permissions = byKind('prod', 'Permission');
    const topics = byKind('prod', 'TopicPermission');
    for (const name of SERVICES) {
      const user = users.find((u) => u.spec.importCredentialsSecret.name === `marketplace-amqp-${name}`)!;
      expect(user.spec.tags).toEqual([]);
      const { configure, write, read, topic } = busPermissions(name as Parameters<typeof busPermissions>[0]);
      const permission = permissions.find((p) => p.spec.userReference.name === user.metadata.name)!;
      expect(permission.spec).toMatchObject({ vhost: '/', permissions: { configure, write, read } });
      const topicPermission = topics.find((p) => p.spec.userReference.name === user.metadata.name)!;
      expect(topicPermission.spec).toMatchObject({ vhost: '/', permissions: topic });
    }
    expect(users).toHaveLength(SERVICES.length);
    const config = byKind('prod', 'ConfigMap').find((c) => c.metadata.name.startsWith('marketplace-config')) as unknown as {
      data: Record<string, string>;
    };
    // Turned on only once every released image sets the AMQP user-id (docs/rabbitmq-queues.md):
    // the overlay's images predate it, and their events would all be refused.
    expect(config.data.BUS_PUBLISHER_USERS).toBeUndefined();
  });
});

describe('the checks refuse what is wrong (so a green run means something)', () => {
  test('an unknown field, a wrong type, bad custom resources and an unhardened Deployment are all reported', () => {
    const dir = mkdtempSync(join(tmpdir(), 'check-k8s-'));
    const file = join(dir, 'broken.yaml');
    writeFileSync(
      file,
      [
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: typo }\nspec:\n  replica: 2\n  selector: { matchLabels: { a: b } }\n  template:\n    metadata: { labels: { a: b } }\n    spec:\n      containers: [{ name: c, image: "x:1" }]',
        'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: wrong-type }\ndata: { replicas: 3 }',
        'apiVersion: rabbitmq.com/v1beta1\nkind: RabbitmqCluster\nmetadata: { name: r }\nspec: { replica: 3 }',
        'apiVersion: mongodbcommunity.mongodb.com/v1\nkind: MongoDBCommunity\nmetadata: { name: m }\nspec: { members: "three", type: ReplicaSet, version: "8.0.12", security: { authentication: { modes: [SCRAM] } }, users: [] }',
        'apiVersion: monitoring.coreos.com/v1\nkind: PodMonitor\nmetadata: { name: p }\nspec: { selector: {}, podMetricsEndpoint: [{ port: http }] }',
        'apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata: { name: r }\nspec: { groups: [{ name: g, rules: [{ alert: A, expr: up == 0, for: soon }] }] }',
      ].join('\n---\n'),
    );
    const result = checkK8s('--file', file)[file]!;
    const status = Object.fromEntries(result.kubeconform.map((r) => [r.kind, r]));
    expect(Object.fromEntries(Object.entries(status).map(([kind, r]) => [kind, r.status]))).toEqual({
      Deployment: 'invalid',
      ConfigMap: 'invalid',
      RabbitmqCluster: 'invalid',
      MongoDBCommunity: 'invalid',
      PodMonitor: 'invalid',
      PrometheusRule: 'invalid',
    });
    expect(status.PodMonitor!.msg).toContain("'podMetricsEndpoint' not allowed");
    expect(status.Deployment!.msg).toContain("'replica' not allowed");
    expect(status.RabbitmqCluster!.msg).toContain("'replica' not allowed");
    expect(result.kubeScore.filter((f) => f.object === 'Deployment/typo').map((f) => f.check)).toEqual(
      expect.arrayContaining([
        'container-resources',
        'container-ephemeral-storage-request-and-limit',
        'container-security-context-readonlyrootfilesystem',
      ]),
    );
    // promtool reads the rule too: its `for` is no duration.
    expect(result.rules).toEqual(['r.rules.yaml: not a valid duration string: "soon"']);
  }, 120_000);

  test('every accepted kube-score finding is justified in k8s/README.md', () => {
    const readme = readFileSync(join(root, 'k8s', 'README.md'), 'utf8');
    const at = readme.indexOf('## kube-score exceptions');
    expect(at).toBeGreaterThan(0);
    const section = readme.slice(at);
    for (const entry of allowList) expect(section).toContain(`\`${entry.check}\``);
  });
});

describe('monitoring: the prod overlay scrapes every process where the NetworkPolicy lets Prometheus in', () => {
  test('promtool check rules: every alert rule parses (PromQL, durations, label and annotation templates)', () => {
    expect(byKind('prod', 'PrometheusRule').length).toBeGreaterThan(0);
    expect(rendered.prod!.checked.rules).toEqual([]);
  });

  test('promtool test rules: the alerts fire on the series they watch, after their `for`, and not on others (deploy/test/rules/)', () => {
    const run = JSON.parse(
      execFileSync(process.execPath, [join(root, 'deploy', 'check-k8s.mjs'), '--test-rules', join(root, 'deploy', 'test', 'rules')], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    ) as { status: number; output: string; tests: string[] };
    expect(run.tests.length).toBeGreaterThan(0);
    expect({ status: run.status, output: run.output }).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
  });

  test('one PodMonitor per process, on a named container port that metrics-from-monitoring admits from `monitoring`', () => {
    const policy = one('prod', 'NetworkPolicy', 'metrics-from-monitoring').spec;
    expect(policy.ingress[0].from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
    const admitted = new Set(policy.ingress[0].ports.map((p: { port: number }) => p.port));
    // The data tier's monitors (data-tier.yaml) are checked below.
    const monitors = byKind('prod', 'PodMonitor').filter((m) => m.metadata.name !== 'rabbitmq');
    expect(monitors.map((m) => m.metadata.name).sort()).toEqual([...SERVICES].sort());
    for (const monitor of monitors) {
      const name = monitor.metadata.name;
      const deployment = one('prod', 'Deployment', name);
      expect(monitor.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': name });
      expect(deployment.spec.template.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
      const [endpoint] = monitor.spec.podMetricsEndpoints;
      expect(endpoint.path).toBe('/metrics');
      const port = container('prod', name).ports.find((p: { name: string }) => p.name === endpoint.port);
      expect({ name, port: port?.containerPort, admitted: admitted.has(port?.containerPort) }).toEqual({
        name,
        port: port?.containerPort,
        admitted: true,
      });
      // The gateway's public port never serves /metrics: its monitor scrapes its own metrics port.
      if (name === 'gateway') expect(endpoint.port).toBe('metrics');
    }
    // The selector of the policy takes in every scraped pod.
    const tiers = policy.podSelector.matchExpressions[0].values as string[];
    for (const name of SERVICES) expect(tiers).toContain(one('prod', 'Deployment', name).spec.template.metadata.labels['marketplace/tier']);
  });

  test('the alert rules and the Grafana dashboard ConfigMap are in prod; dev has no monitoring objects', () => {
    const rule = one('prod', 'PrometheusRule', 'marketplace');
    const alerts = rule.spec.groups.flatMap((g: { rules: Array<{ alert: string }> }) => g.rules.map((r) => r.alert));
    expect(alerts).toEqual(
      expect.arrayContaining([
        'MarketplaceHighErrorRatio',
        'MarketplaceHighLatency',
        'MarketplaceConsumerLag',
        'MarketplaceDeadLetters',
        'MarketplaceOutboxStuck',
        'MarketplaceOverdueHolds',
        'MarketplacePodsUnavailable',
      ]),
    );
    const dashboard = one('prod', 'ConfigMap', 'marketplace-grafana-dashboard');
    expect(dashboard.metadata).toMatchObject({ labels: { grafana_dashboard: '1' } });
    expect(JSON.parse((dashboard as unknown as { data: Record<string, string> }).data['marketplace.json']!).uid).toBe('marketplace');
    expect(byKind('dev', 'PodMonitor')).toEqual([]);
    expect(byKind('dev', 'PrometheusRule')).toEqual([]);
  });

  test("the data tier: RabbitMQ's PodMonitor on 15692, MongoDB's ServiceMonitor on the agent's endpoint, their alerts in the overlay's namespace", () => {
    const rabbit = one('prod', 'PodMonitor', 'rabbitmq');
    const cluster = one('prod', 'RabbitmqCluster', 'marketplace-rabbitmq');
    expect(rabbit.spec.selector.matchLabels).toEqual({
      'app.kubernetes.io/name': cluster.metadata.name,
      'app.kubernetes.io/component': 'rabbitmq',
    });
    // `prometheus`: the cluster operator's name for container port 15692 (the rabbitmq_prometheus plugin).
    expect(rabbit.spec.podMetricsEndpoints).toEqual([expect.objectContaining({ port: 'prometheus', path: '/metrics' })]);
    expect(cluster.spec.image).toMatch(/^rabbitmq:4\.2\.\d+-management$/);
    const mongo = one('prod', 'MongoDBCommunity', 'marketplace-mongo');
    expect(mongo.spec.version).toMatch(/^8\.0\.\d+$/);
    const sm = one('prod', 'ServiceMonitor', 'mongo');
    // The operator's Service <name>-svc carries the port `prometheus` once spec.prometheus is set.
    expect(sm.spec.selector.matchLabels).toEqual({ app: `${mongo.metadata.name}-svc` });
    const [endpoint] = sm.spec.endpoints;
    expect(endpoint).toMatchObject({ port: 'prometheus', path: '/metrics' });
    expect(mongo.spec.prometheus).toEqual({
      username: 'prometheus',
      passwordSecretRef: { name: 'marketplace-mongo-metrics', key: 'password' },
    });
    expect(endpoint.basicAuth).toEqual({
      username: { name: mongo.spec.prometheus.passwordSecretRef.name, key: 'username' },
      password: { name: mongo.spec.prometheus.passwordSecretRef.name, key: 'password' },
    });
    const rule = one('prod', 'PrometheusRule', 'marketplace-data-tier');
    const rules = rule.spec.groups.flatMap(
      (g: { rules: Array<{ alert: string; expr: string; labels: Record<string, string> }> }) => g.rules,
    );
    expect(rules.map((r: { alert: string }) => r.alert)).toEqual(
      expect.arrayContaining([
        'RabbitmqNoMajorityOfNodesReady',
        'RabbitmqMemoryAlarm',
        'RabbitmqDiskAlarm',
        'MongodbNoMajorityOfMembersReady',
      ]),
    );
    for (const r of rules) {
      // Each expression selects the overlay's namespace, the first quoted string, and no other.
      expect({ alert: r.alert, first: /"([^"]*)"/.exec(r.expr)?.[1] }).toEqual({ alert: r.alert, first: 'marketplace' });
      expect({ alert: r.alert, team: r.labels.team, service: r.labels.service }).toEqual({
        alert: r.alert,
        team: 'marketplace',
        service: expect.stringMatching(/^(rabbitmq|mongo)$/),
      });
    }
    // Each has its runbook in docs/observability.md ("Data tier alerts").
    const docs = readFileSync(join(root, 'docs', 'observability.md'), 'utf8');
    for (const r of rules)
      expect({ alert: r.alert, runbook: docs.includes(`### ${r.alert}\n`) }).toEqual({ alert: r.alert, runbook: true });
    // As is MarketplacePodsUnavailable's.
    const pods = one('prod', 'PrometheusRule', 'marketplace')
      .spec.groups.flatMap((g: { rules: Array<{ alert: string; expr: string }> }) => g.rules)
      .find((r: { alert: string }) => r.alert === 'MarketplacePodsUnavailable');
    expect(pods.expr).toContain('{namespace="marketplace"}');
  });
});

describe('payments are never a silent sandbox', () => {
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

describe('the gateway never runs on development defaults in production', () => {
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

  const MIGRATE_STEPS = SERVICES.map((name) => `${name}-migrate`);
  const INIT_STEPS = ['bus-users', 'db-users', ...MIGRATE_STEPS];

  test('runs MongoDB, RabbitMQ, their init steps, the migrations, the five services and the gateway, each server with a health check', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      ['bus-users', 'db-users', 'mongo', 'rabbitmq', ...SERVICES, ...MIGRATE_STEPS].sort(),
    );
    for (const [name, service] of Object.entries(compose.services))
      if (!INIT_STEPS.includes(name)) expect(service.healthcheck?.test).toBeDefined();
    expect(compose.services['db-users'].depends_on.mongo.condition).toBe('service_healthy');
    expect(compose.services['bus-users'].depends_on.rabbitmq.condition).toBe('service_healthy');
  });

  test('each service reaches MongoDB and RabbitMQ as its own user, and checks the publishers against theirs', () => {
    for (const name of SERVICES) {
      const { environment } = compose.services[name];
      expect(environment.MONGO_URL).toMatch(
        new RegExp(`^mongodb://${name}:\\$\\{MONGO_PASSWORD_${name.toUpperCase()}:\\?[^}]+\\}@mongo:27017/\\?authSource=${name}$`),
      );
      expect(environment.AMQP_URL).toMatch(
        new RegExp(`^amqp://${name}:\\$\\{AMQP_PASSWORD_${name.toUpperCase()}:\\?[^}]+\\}@rabbitmq:5672$`),
      );
      expect(environment.BUS_PUBLISHER_USERS).toBe('{service}');
    }
  });

  test('publishes only the gateway and starts each service after what it needs is healthy', () => {
    const published = Object.entries(compose.services)
      .filter(([, s]) => s.ports)
      .map(([name]) => name);
    expect(published).toEqual(['gateway']);
    for (const name of SERVICES) {
      const service = compose.services[name];
      expect(service.build.args.SERVICE).toBe(name);
      // The init steps run once MongoDB and RabbitMQ are healthy, and make the users first.
      expect(service.depends_on['db-users'].condition).toBe('service_completed_successfully');
      expect(service.depends_on['bus-users'].condition).toBe('service_completed_successfully');
      expect(service.read_only).toBe(true);
      // Its migrations ran (and ended well) before it starts: it refuses a database behind them.
      expect(service.depends_on[`${name}-migrate`].condition).toBe('service_completed_successfully');
    }
    // Started, not healthy: a service is ready once it has the gateway's JWKS.
    for (const name of SERVICES.slice(1)) expect(compose.services.gateway.depends_on[name].condition).toBe('service_started');
    for (const name of SERVICES.slice(1)) {
      expect(compose.services[name].environment.JWT_JWKS_URL).toBe('http://gateway:8080/v1/auth/.well-known/jwks.json');
      expect(compose.services[name].environment.JWT_PUBLIC_KEY).toBeUndefined();
    }
  });

  test('each migrate step is the service’s image and environment running `dist/migrate.js up` once', () => {
    for (const name of SERVICES) {
      const step = compose.services[`${name}-migrate`];
      expect(step.image).toBe(compose.services[name].image);
      expect(step.environment).toEqual(compose.services[name].environment);
      expect(step.command).toEqual(['node', 'dist/migrate.js', 'up']);
      expect(step.restart).toBe('no');
      expect(step.depends_on['db-users'].condition).toBe('service_completed_successfully');
      expect(step.read_only).toBe(true);
    }
  });

  test('gives each service longer than its shutdown budget between SIGTERM and SIGKILL', () => {
    const seconds = (duration: string) => {
      const match = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(String(duration));
      if (!match || (!match[1] && !match[2])) throw new Error(`stop_grace_period ${duration}: expected e.g. 30s or 1m30s`);
      return Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0);
    };
    for (const name of SERVICES) {
      const service = compose.services[name];
      const grace = Number(service.environment.SHUTDOWN_GRACE_MS) / 1000;
      const timeout = Number(service.environment.SHUTDOWN_TIMEOUT_MS) / 1000;
      expect(grace).toBeGreaterThan(0);
      expect(timeout).toBeGreaterThan(grace);
      // The timeout counts from the signal, grace included; grace added anyway, as in the pods.
      expect(seconds(service.stop_grace_period)).toBeGreaterThan(grace + timeout);
    }
  });
});
