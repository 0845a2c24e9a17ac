import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';

// The overlays as any cluster gets them: the parameters of k8s/overlays/<overlay>/params.yaml in
// place (and nothing of another cluster's), Pod Security `restricted` satisfied by every pod, high
// UIDs/GIDs, the data tier's disruption budgets, the Gateway API edge and the monitoring stack's
// conventions. Rendered with the pinned kustomize (deploy/check-k8s.mjs --render).
const root = join(__dirname, '..', '..');
const checkK8s = (...args: string[]) =>
  execFileSync(process.execPath, [join(root, 'deploy', 'check-k8s.mjs'), ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'inherit'],
  });

type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec?: any;
};
const objectsOf = (yaml: string) => parseAllDocuments(yaml).map((doc) => doc.toJS() as K8sObject);
const paramsOf = (overlay: string) =>
  (parse(readFileSync(join(root, 'k8s', 'overlays', overlay, 'params.yaml'), 'utf8')) as { data: Record<string, string> }).data;

// Another cluster's parameters: none of them equal to, or part of, the defaults.
const OTHER: Record<string, string> = {
  'edge-namespace': 'gw-edge',
  'gateway-class': 'cilium',
  'monitoring-namespace': 'obs-metrics',
  'collector-namespace': 'obs-traces',
  'mongodb-operator-namespace': 'mdb-op',
  'rabbitmq-operator-namespace': 'rmq-op',
  'api-host': 'api.shop.test',
  'app-origin': 'https://shop.test',
  registry: 'ghcr.io/acme',
  'monitoring-release': 'prom-main',
  'runbook-base-url': 'https://wiki.acme.test/runbooks/marketplace',
  'acme-email': 'sre@acme.test',
  'secret-store': 'vault-main',
  'secret-store-kind': 'SecretStore',
};

/** A copy of k8s/ with the prod overlay's params replaced (and components added), rendered. */
function renderProdWith(data: Record<string, string>, extraComponents: string[] = []): K8sObject[] {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-params-'));
  try {
    cpSync(join(root, 'k8s'), join(dir, 'k8s'), { recursive: true });
    const overlay = join(dir, 'k8s', 'overlays', 'prod');
    const params = parse(readFileSync(join(overlay, 'params.yaml'), 'utf8')) as { data: Record<string, string> };
    params.data = data;
    writeFileSync(join(overlay, 'params.yaml'), stringify(params));
    if (extraComponents.length > 0) {
      const file = join(overlay, 'kustomization.yaml');
      const text = readFileSync(file, 'utf8');
      // Before components/params, which must come last.
      writeFileSync(
        file,
        text.replace('  - ../../components/params\n', `${extraComponents.map((c) => `  - ${c}\n`).join('')}  - ../../components/params\n`),
      );
    }
    return objectsOf(checkK8s('--render', overlay));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let dev: K8sObject[];
let prod: K8sObject[];
let ci: K8sObject[];
let prodYaml: string;
beforeAll(() => {
  dev = objectsOf(checkK8s('--render', join(root, 'k8s', 'overlays', 'dev')));
  prodYaml = checkK8s('--render', join(root, 'k8s', 'overlays', 'prod'));
  prod = objectsOf(prodYaml);
  ci = objectsOf(checkK8s('--render', join(root, 'k8s', 'overlays', 'ci')));
}, 900_000);

const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const one = (objects: K8sObject[], kind: string, name: string) => byKind(objects, kind).find((o) => o.metadata.name === name)!;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type PodSpec = any;
const pods = (objects: K8sObject[]): Array<[string, PodSpec]> =>
  objects.flatMap((o): Array<[string, PodSpec]> => {
    if (['Deployment', 'StatefulSet', 'Job', 'DaemonSet'].includes(o.kind)) return [[`${o.kind}/${o.metadata.name}`, o.spec.template.spec]];
    if (o.kind === 'CronJob') return [[`${o.kind}/${o.metadata.name}`, o.spec.jobTemplate.spec.template.spec]];
    return [];
  });
const namespaceSelectors = (objects: K8sObject[]) =>
  byKind(objects, 'NetworkPolicy').flatMap((p) =>
    [
      ...(p.spec.ingress ?? []).flatMap((r: { from?: unknown[] }) => r.from ?? []),
      ...(p.spec.egress ?? []).flatMap((r: { to?: unknown[] }) => r.to ?? []),
    ]
      .map(
        (peer) =>
          (peer as { namespaceSelector?: { matchLabels?: Record<string, string> } }).namespaceSelector?.matchLabels?.[
            'kubernetes.io/metadata.name'
          ],
      )
      .filter((ns): ns is string => ns !== undefined)
      .map((ns) => ({ policy: p.metadata.name, ns })),
  );

/** Pod Security Admission `restricted` (v1.33) on one pod spec: the reasons it would be refused. */
function restrictedViolations(pod: PodSpec): string[] {
  const out: string[] = [];
  const podSc = pod.securityContext ?? {};
  const allowedVolumes = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];
  for (const volume of pod.volumes ?? []) {
    const type = Object.keys(volume).find((k) => k !== 'name');
    if (!allowedVolumes.includes(type!)) out.push(`volume ${volume.name}: ${type}`);
  }
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) out.push('host namespaces');
  if (podSc.runAsUser === 0) out.push('pod runAsUser 0');
  for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
    const sc = c.securityContext ?? {};
    if (sc.allowPrivilegeEscalation !== false) out.push(`${c.name}: allowPrivilegeEscalation`);
    if (sc.privileged) out.push(`${c.name}: privileged`);
    if (!(sc.capabilities?.drop ?? []).includes('ALL')) out.push(`${c.name}: capabilities not dropped`);
    if ((sc.capabilities?.add ?? []).some((cap: string) => cap !== 'NET_BIND_SERVICE')) out.push(`${c.name}: capabilities added`);
    if ((sc.runAsNonRoot ?? podSc.runAsNonRoot) !== true) out.push(`${c.name}: runAsNonRoot`);
    if (sc.runAsUser === 0) out.push(`${c.name}: runAsUser 0`);
    const seccomp = (sc.seccompProfile ?? podSc.seccompProfile)?.type;
    if (!['RuntimeDefault', 'Localhost'].includes(seccomp)) out.push(`${c.name}: seccompProfile ${seccomp}`);
    for (const port of c.ports ?? []) if (port.hostPort) out.push(`${c.name}: hostPort`);
  }
  return out;
}

describe('Pod Security Admission: restricted', () => {
  test.each(['dev', 'prod', 'ci'])('%s ships its namespace labelled restricted (enforce, audit, warn), pinned to v1.33', (overlay) => {
    const objects = { dev: () => dev, prod: () => prod, ci: () => ci }[overlay]!();
    const namespaces = byKind(objects, 'Namespace');
    expect(namespaces).toHaveLength(1);
    const [ns] = namespaces;
    expect(ns!.metadata.name).toBe({ dev: 'marketplace-dev', prod: 'marketplace', ci: 'marketplace-ci' }[overlay]);
    for (const mode of ['enforce', 'audit', 'warn']) {
      expect(ns!.metadata.labels).toMatchObject({
        [`pod-security.kubernetes.io/${mode}`]: 'restricted',
        [`pod-security.kubernetes.io/${mode}-version`]: 'v1.33',
      });
    }
    // Every other object lives in it.
    expect(objects.filter((o) => o.kind !== 'Namespace' && o.metadata.namespace !== ns!.metadata.name)).toEqual([]);
  });

  test.each(['dev', 'prod', 'ci'])('%s: every pod template passes the restricted profile', (overlay) => {
    const objects = { dev: () => dev, prod: () => prod, ci: () => ci }[overlay]!();
    const found = pods(objects);
    expect(found.length).toBeGreaterThan(10);
    expect(found.map(([name, pod]) => ({ name, violations: restrictedViolations(pod) })).filter((x) => x.violations.length > 0)).toEqual(
      [],
    );
  });

  test('k8s/jobs/ (restore, dlq, migrate-queues) pass it too', () => {
    for (const name of ['restore', 'dlq', 'migrate-queues']) {
      const job = parse(readFileSync(join(root, 'k8s', 'jobs', `${name}.yaml`), 'utf8')) as K8sObject;
      expect({ name, violations: restrictedViolations(job.spec.template.spec) }).toEqual({ name, violations: [] });
    }
  });

  test("prod: the operators' pods pass it once the custom resources' overrides merge into what the operators make", () => {
    // What the operators set themselves (from their sources): mongodb-kubernetes: pod runAsUser 2000,
    // runAsNonRoot, fsGroup 2000, containers readOnlyRootFilesystem + no privilege escalation, no
    // seccomp, capabilities kept; cluster-operator: runAsUser 999, fsGroup 0, nothing else.
    const byName = (list: Array<{ name: string }>) => Object.fromEntries(list.map((c) => [c.name, c]));
    const mongo = one(prod, 'MongoDBCommunity', 'marketplace-mongo').spec.statefulSet.spec.template.spec;
    const mongoPod = {
      securityContext: { runAsUser: 2000, runAsNonRoot: true, fsGroup: 2000, ...mongo.securityContext },
      initContainers: ['mongod-posthook', 'mongodb-agent-readinessprobe'].map((name) => ({ name, ...byName(mongo.initContainers)[name] })),
      containers: ['mongod', 'mongodb-agent'].map((name) => ({ name, ...byName(mongo.containers)[name] })),
    };
    expect(restrictedViolations(mongoPod)).toEqual([]);
    const rabbit = one(prod, 'RabbitmqCluster', 'marketplace-rabbitmq').spec.override.statefulSet.spec.template.spec;
    const rabbitPod = {
      securityContext: { runAsUser: 999, fsGroup: 0, ...rabbit.securityContext },
      initContainers: [{ name: 'setup-container', ...byName(rabbit.initContainers)['setup-container'] }],
      containers: [{ name: 'rabbitmq', ...byName(rabbit.containers).rabbitmq }],
    };
    expect(restrictedViolations(rabbitPod)).toEqual([]);
  });
});

describe('the CI cluster pulls every image from the registry', () => {
  // npm run k8s:e2e imports nothing into the node: each image is pulled once by digest from the
  // local registry, so a pod that may not pull (`Never`) never starts.
  test('every container of every pod template (Deployments, StatefulSets, the migrate Jobs) pulls IfNotPresent', () => {
    const policies = pods(ci).flatMap(([name, pod]) =>
      [...(pod.initContainers ?? []), ...pod.containers].map((c: { name: string; imagePullPolicy?: string }) => ({
        container: `${name}/${c.name}`,
        policy: c.imagePullPolicy,
      })),
    );
    expect(policies.some(({ container }) => container.startsWith('Job/'))).toBe(true);
    expect(policies.filter(({ policy }) => policy !== 'IfNotPresent')).toEqual([]);
  });
});

describe('high UIDs and GIDs (>= 10000)', () => {
  test.each(['dev', 'prod'])("%s: every pod runs as a user and group above 10000, the volume's group too", (overlay) => {
    const objects = overlay === 'dev' ? dev : prod;
    for (const [name, pod] of pods(objects)) {
      const sc = pod.securityContext;
      expect({ name, runAsUser: sc.runAsUser >= 10000, runAsGroup: sc.runAsGroup >= 10000, fsGroup: sc.fsGroup >= 10000 }).toEqual({
        name,
        runAsUser: true,
        runAsGroup: true,
        fsGroup: true,
      });
    }
  });

  test("the images' user is 10001:10001, made in the image; the pods run as that user", () => {
    for (const file of ['service.Dockerfile', 'tools.Dockerfile']) {
      const text = readFileSync(join(root, 'docker', file), 'utf8');
      expect(text).toMatch(/groupadd --gid 10001 marketplace/);
      expect(text).toMatch(/useradd --uid 10001 --gid marketplace/);
      const users = [...text.matchAll(/^USER (.+)$/gm)].map((m) => m[1]);
      expect(users).toEqual(['10001:10001']);
    }
    expect(readFileSync(join(root, 'docker', 'standins', 'mongo-java-server.Dockerfile'), 'utf8')).toMatch(/^USER 10001:10001$/m);
    for (const [name, pod] of pods(prod).filter(([n]) => !n.startsWith('StatefulSet/'))) {
      expect({ name, user: pod.securityContext.runAsUser, group: pod.securityContext.runAsGroup }).toEqual({
        name,
        user: 10001,
        group: 10001,
      });
    }
  });

  test("kube-score's allow-list has no low-id exception left", () => {
    const allow = parse(readFileSync(join(root, 'k8s', 'kube-score-allow.yaml'), 'utf8')) as Array<{ check: string }>;
    expect(allow.map((a) => a.check)).not.toContain('container-security-context-user-group-id');
  });
});

describe('the data tier: disruption budgets', () => {
  test('prod: one MongoDB member and one RabbitMQ node at a time, selected by the labels the operators set', () => {
    const budgets = byKind(prod, 'PodDisruptionBudget');
    const mdbc = byKind(prod, 'MongoDBCommunity')[0]!.metadata.name;
    const rmq = byKind(prod, 'RabbitmqCluster')[0]!.metadata.name;
    expect(one(prod, 'PodDisruptionBudget', 'marketplace-mongo').spec).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: { app: `${mdbc}-svc` } },
    });
    expect(one(prod, 'PodDisruptionBudget', 'marketplace-rabbitmq').spec).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: { 'app.kubernetes.io/name': rmq, 'app.kubernetes.io/component': 'rabbitmq' } },
    });
    // The services' budgets are prod's minAvailable: 2, untouched.
    for (const budget of budgets.filter((b) => !b.metadata.name.startsWith('marketplace-'))) expect(budget.spec.minAvailable).toBe(2);
    // Three members and three nodes: one down keeps the majority.
    expect(one(prod, 'MongoDBCommunity', mdbc).spec.members).toBe(3);
    expect(one(prod, 'RabbitmqCluster', rmq).spec.replicas).toBe(3);
  });
});

describe('parameters: what differs between clusters, in one place', () => {
  test('no placeholder is left in dev or prod, and the local params ConfigMap is never applied', () => {
    for (const objects of [dev, prod, ci]) {
      expect(JSON.stringify(objects)).not.toContain('set-by-params');
      expect(objects.filter((o) => o.metadata.name === 'cluster-params')).toEqual([]);
    }
  });

  test('both overlays name every parameter components/params reads', () => {
    const component = readFileSync(join(root, 'k8s', 'components', 'params', 'kustomization.yaml'), 'utf8');
    const read = [...component.matchAll(/fieldPath: data\.([\w-]+)/g)].map((m) => m[1]!);
    expect(read.length).toBeGreaterThan(8);
    for (const overlay of ['dev', 'prod']) expect(Object.keys(paramsOf(overlay))).toEqual(expect.arrayContaining(read));
  });

  test('the base holds nothing of a cluster: namespaces, hosts, ingress class, registry are all parameters', () => {
    const dir = join(root, 'k8s', 'base');
    const text = readdirSync(dir)
      .map((file) => readFileSync(join(dir, file), 'utf8'))
      .join('\n');
    const objects = readdirSync(dir)
      .flatMap((file) => objectsOf(readFileSync(join(dir, file), 'utf8')))
      .filter((o) => o?.kind);
    // Other namespaces: only CoreDNS's kube-system (where every cluster runs it) or a placeholder.
    expect(new Set(namespaceSelectors(objects).map((s) => s.ns))).toEqual(new Set(['kube-system', 'set-by-params']));
    // No edge of one implementation, no registry, no host of any overlay.
    expect(objects.filter((o) => ['Ingress', 'Gateway', 'HTTPRoute'].includes(o.kind))).toEqual([]);
    for (const [, pod] of pods(objects)) for (const c of pod.containers) expect(c.image).toMatch(/^marketplace\/[\w-]+:[\w.-]+$/);
    for (const overlay of ['dev', 'prod'])
      for (const key of ['api-host', 'app-origin', 'edge-namespace', 'runbook-base-url', 'monitoring-release'])
        expect({ overlay, key, inBase: text.includes(paramsOf(overlay)[key]!) }).toEqual({ overlay, key, inBase: false });
  });

  test("prod rendered with another cluster's params: every value in place, nothing of the defaults left", () => {
    // With the optional components that take parameters (the collector's namespace, the secret store).
    const other = renderProdWith(OTHER, ['../../components/opentelemetry', '../../components/external-secrets']);
    const text = JSON.stringify(other);
    const defaults = paramsOf('prod');
    // Every string of every object: none is a default value, nor (for hosts, origins, URLs, the
    // registry: values that sit inside longer strings) contains one.
    const strings: string[] = [];
    const walk = (node: unknown): void => {
      if (typeof node === 'string') strings.push(node);
      else if (node && typeof node === 'object')
        for (const [k, v] of Object.entries(node)) {
          strings.push(k);
          walk(v);
        }
    };
    walk(other);
    for (const [key, value] of Object.entries(defaults)) {
      const leaked = strings.filter((s) => s === value || (/[./]/.test(value) && s.includes(value)));
      expect({ key, leaked }).toEqual({ key, leaked: [] });
    }
    expect(text).not.toContain('set-by-params');
    // Namespaces: every namespaceSelector names one of the other cluster's (or kube-system's DNS).
    const selected = namespaceSelectors(other);
    expect(new Set(selected.map((s) => s.ns))).toEqual(
      new Set(['kube-system', 'gw-edge', 'obs-metrics', 'obs-traces', 'mdb-op', 'rmq-op']),
    );
    expect(selected.filter((s) => s.policy === 'gateway-from-ingress').map((s) => s.ns)).toEqual(['gw-edge']);
    expect(selected.filter((s) => s.policy === 'mongo-replica-set').map((s) => s.ns)).toEqual(['mdb-op', 'obs-metrics']);
    expect(selected.filter((s) => s.policy === 'rabbitmq-cluster').map((s) => s.ns)).toEqual(['rmq-op', 'obs-metrics']);
    expect(selected.filter((s) => s.policy === 'traces-to-collector').map((s) => s.ns)).toEqual(['obs-traces']);
    // Hosts and origins.
    const config = one(other, 'ConfigMap', 'marketplace-config') as unknown as { data: Record<string, string> };
    expect(config.data).toMatchObject({ PUBLIC_URL: 'https://api.shop.test', CHECKOUT_REDIRECT_ORIGINS: 'https://shop.test' });
    const gatewayEnv = one(other, 'Deployment', 'gateway').spec.template.spec.containers[0].env as Array<{ name: string; value?: string }>;
    expect(gatewayEnv.find((e) => e.name === 'CORS_ORIGINS')?.value).toBe('https://shop.test');
    const gw = one(other, 'Gateway', 'marketplace');
    expect(gw.spec.gatewayClassName).toBe('cilium');
    expect(gw.spec.listeners.map((l: { hostname: string }) => l.hostname)).toEqual(['api.shop.test', 'api.shop.test']);
    for (const route of byKind(other, 'HTTPRoute')) expect(route.spec.hostnames).toEqual(['api.shop.test']);
    // Registry: every image of ours from it, tags as the overlay pins them.
    for (const [name, pod] of pods(other).filter(([n]) => !n.startsWith('StatefulSet/')))
      for (const c of pod.containers)
        expect({ name, image: c.image }).toEqual({
          name,
          image: expect.stringMatching(/^ghcr\.io\/acme\/marketplace[/-][\w-]+:0\.\d+\.\d+(@sha256:[0-9a-f]{64})?$/),
        });
    // The secret store: every ExternalSecret reads the other cluster's.
    expect(byKind(other, 'ExternalSecret').length).toBe(16);
    for (const o of byKind(other, 'ExternalSecret')) expect(o.spec.secretStoreRef).toEqual({ kind: 'SecretStore', name: 'vault-main' });
    // Monitoring: the selector label and the runbooks.
    for (const kind of ['PodMonitor', 'ServiceMonitor', 'PrometheusRule'])
      for (const o of byKind(other, kind)) expect(o.metadata.labels).toMatchObject({ release: 'prom-main' });
    for (const name of ['marketplace', 'marketplace-data-tier'])
      for (const rule of one(other, 'PrometheusRule', name).spec.groups.flatMap((g: { rules: unknown[] }) => g.rules))
        expect(rule.annotations.runbook_url).toBe(`https://wiki.acme.test/runbooks/marketplace#${rule.alert.toLowerCase()}`);
  }, 120_000);

  test('the rendering with other params is as valid as the default one (kubeconform -strict, kube-score)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8s-params-check-'));
    try {
      const file = join(dir, 'other.yaml');
      writeFileSync(
        file,
        renderProdWith(OTHER)
          .map((o) => stringify(o))
          .join('---\n'),
      );
      const result = (
        JSON.parse(checkK8s('--json', '--file', file)) as {
          results: Record<
            string,
            { kubeconform: Array<{ status: string; name: string; msg: string }>; kubeScore: Array<{ check: string; object: string }> }
          >;
        }
      ).results[file]!;
      expect(result.kubeconform.filter((r) => r.status !== 'valid')).toEqual([]);
      expect(result.kubeScore.filter((f) => f.check !== 'networkpolicy-targets-pod')).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('the edge: Gateway API in prod', () => {
  test('prod has no Ingress: a Gateway (HTTPS with marketplace-tls, HTTP redirected) and HTTPRoutes to the gateway Service', () => {
    expect(byKind(prod, 'Ingress')).toEqual([]);
    const gw = one(prod, 'Gateway', 'marketplace');
    expect(gw.apiVersion).toBe('gateway.networking.k8s.io/v1');
    expect(gw.spec.gatewayClassName).toBe(paramsOf('prod')['gateway-class']);
    const https = gw.spec.listeners.find((l: { name: string }) => l.name === 'https');
    expect(https).toMatchObject({
      protocol: 'HTTPS',
      port: 443,
      hostname: paramsOf('prod')['api-host'],
      tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', name: 'marketplace-tls' }] },
      allowedRoutes: { namespaces: { from: 'Same' } },
    });
    const api = one(prod, 'HTTPRoute', 'gateway');
    expect(api.spec.parentRefs).toEqual([{ name: 'marketplace', sectionName: 'https' }]);
    expect(api.spec.rules).toEqual([
      { matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name: 'gateway', port: 8080 }] },
    ]);
    const redirect = one(prod, 'HTTPRoute', 'gateway-https-redirect');
    expect(redirect.spec.parentRefs).toEqual([{ name: 'marketplace', sectionName: 'http' }]);
    expect(redirect.spec.rules[0].filters).toEqual([{ type: 'RequestRedirect', requestRedirect: { scheme: 'https', statusCode: 301 } }]);
    // Only the edge's namespace reaches the gateway's port.
    expect(
      namespaceSelectors(prod)
        .filter((s) => s.policy === 'gateway-from-ingress')
        .map((s) => s.ns),
    ).toEqual([paramsOf('prod')['edge-namespace']]);
  });

  test('components/cert-manager: an ACME Issuer answering HTTP-01 on the Gateway, the Certificate of the API host into marketplace-tls', () => {
    const objects = renderProdWith(OTHER, ['../../components/cert-manager']);
    const issuer = one(objects, 'Issuer', 'marketplace-letsencrypt');
    expect(issuer.spec.acme).toMatchObject({
      server: 'https://acme-v02.api.letsencrypt.org/directory',
      email: 'sre@acme.test',
      solvers: [{ http01: { gatewayHTTPRoute: { parentRefs: [{ kind: 'Gateway', name: 'marketplace', sectionName: 'http' }] } } }],
    });
    const certificate = one(objects, 'Certificate', 'marketplace-tls');
    expect(certificate.spec).toMatchObject({
      secretName: 'marketplace-tls',
      dnsNames: ['api.shop.test'],
      issuerRef: { kind: 'Issuer', name: 'marketplace-letsencrypt' },
    });
    expect(certificate.metadata.namespace).toBe('marketplace');
    // Not in prod unless enabled.
    expect(byKind(prod, 'Certificate').map((c) => c.metadata.name)).not.toContain('marketplace-tls');
  }, 120_000);

  test("ci: prod's Gateway and HTTPRoutes, of Traefik's class, on the ports of Traefik's entryPoints (scripts/k8s/cluster.sh), ci's host", () => {
    expect(byKind(ci, 'Ingress')).toEqual([]);
    const cluster = readFileSync(join(root, 'scripts', 'k8s', 'cluster.sh'), 'utf8');
    const constant = (name: string) => Number(new RegExp(`^${name}=(\\d+)$`, 'm').exec(cluster)?.[1]);
    const ciParams = parse(readFileSync(join(root, 'k8s', 'overlays', 'ci', 'params', 'kustomization.yaml'), 'utf8')).patches[0].patch;
    const { data } = parse(ciParams) as { data: Record<string, string> };
    expect(data['gateway-class']).toBe(/^GATEWAY_CLASS=(\S+)$/m.exec(cluster)?.[1]);
    const gw = one(ci, 'Gateway', 'marketplace');
    expect(gw.metadata.namespace).toBe('marketplace-ci');
    expect(gw.spec.gatewayClassName).toBe(data['gateway-class']);
    const ports = Object.fromEntries(gw.spec.listeners.map((l: { name: string; port: number }) => [l.name, l.port]));
    expect(ports).toEqual({ https: constant('EDGE_HTTPS_PORT'), http: constant('EDGE_HTTP_PORT') });
    // Everything else of each listener and route as prod's, but the host: ci's.
    const withHost = (o: K8sObject, host: string) => JSON.parse(JSON.stringify(o.spec).replaceAll(`"${host}"`, '"API-HOST"'));
    const listenersOf = (objects: K8sObject[], host: string) =>
      withHost(one(objects, 'Gateway', 'marketplace'), host).listeners.map((l: { port?: number }) => ({ ...l, port: undefined }));
    expect(listenersOf(ci, data['api-host']!)).toEqual(listenersOf(prod, paramsOf('prod')['api-host']!));
    for (const route of byKind(prod, 'HTTPRoute'))
      expect(withHost(one(ci, 'HTTPRoute', route.metadata.name), data['api-host']!)).toEqual(
        withHost(route, paramsOf('prod')['api-host']!),
      );
    expect(byKind(ci, 'HTTPRoute')).toHaveLength(byKind(prod, 'HTTPRoute').length);
    // Nothing of the Gateway's left to a placeholder; the params of dev for all the rest.
    expect(JSON.stringify(ci)).not.toContain('set-by-params');
    expect(one(ci, 'Deployment', 'gateway').spec.template.spec.containers[0].env).toContainEqual({
      name: 'CORS_ORIGINS',
      value: paramsOf('dev')['app-origin'],
    });
  });

  test("the prod dry-run's CRDs include the Gateway API's standard channel, from the Go module, pinned", () => {
    const source = readFileSync(join(root, 'deploy', 'check-k8s.mjs'), 'utf8');
    expect(source).toMatch(/module: 'sigs\.k8s\.io\/gateway-api',\s*version: 'v\d+\.\d+\.\d+'/);
    expect(source).toContain('config/crd/standard/gateway.networking.k8s.io_gateways.yaml');
    expect(source).toContain('config/crd/standard/gateway.networking.k8s.io_httproutes.yaml');
  });
});

describe('components/opentelemetry: traces to the collector of the params', () => {
  type Env = { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } };
  const otelOf = (objects: K8sObject[]) => {
    const config = byKind(objects, 'ConfigMap').find((c) => c.metadata.name.startsWith('marketplace-otel')) as unknown as
      { metadata: { name: string }; data: Record<string, string> } | undefined;
    return config;
  };

  test('each Deployment: OTEL_* from the ConfigMap, its service name from its label, its pod and namespace as resource attributes', () => {
    const objects = renderProdWith(OTHER, ['../../components/opentelemetry']);
    const config = otelOf(objects)!;
    expect(config.data).toMatchObject({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.obs-traces.svc:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: expect.stringMatching(/^(0(\.\d+)?|1)$/),
    });
    for (const deployment of byKind(objects, 'Deployment')) {
      const [c] = deployment.spec.template.spec.containers;
      expect(c.envFrom).toEqual([{ configMapRef: { name: config.metadata.name } }]);
      const env = c.env as Env[];
      const at = (name: string) => env.findIndex((e) => e.name === name);
      expect(env[at('OTEL_SERVICE_NAME')]!.valueFrom!.fieldRef!.fieldPath).toBe("metadata.labels['app.kubernetes.io/name']");
      expect(deployment.spec.template.metadata.labels['app.kubernetes.io/name']).toBe(deployment.metadata.name);
      expect(env[at('K8S_POD_NAME')]!.valueFrom!.fieldRef!.fieldPath).toBe('metadata.name');
      expect(env[at('K8S_NAMESPACE_NAME')]!.valueFrom!.fieldRef!.fieldPath).toBe('metadata.namespace');
      // $(VAR) expands only a variable defined before it.
      expect(at('OTEL_RESOURCE_ATTRIBUTES')).toBeGreaterThan(Math.max(at('K8S_POD_NAME'), at('K8S_NAMESPACE_NAME')));
      expect(env[at('OTEL_RESOURCE_ATTRIBUTES')]!.value).toBe('k8s.pod.name=$(K8S_POD_NAME),k8s.namespace.name=$(K8S_NAMESPACE_NAME)');
    }
    const policy = one(objects, 'NetworkPolicy', 'traces-to-collector').spec;
    expect(policy.egress).toEqual([
      {
        to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'obs-traces' } } }],
        ports: [
          { protocol: 'TCP', port: 4317 },
          { protocol: 'TCP', port: 4318 },
        ],
      },
    ]);
  });

  test('optional: dev and prod send no traces and open no egress for them; ci sends every trace as JSON to its receiver', () => {
    for (const objects of [dev, prod]) {
      expect(otelOf(objects)).toBeUndefined();
      expect(byKind(objects, 'NetworkPolicy').map((p) => p.metadata.name)).not.toContain('traces-to-collector');
      for (const d of byKind(objects, 'Deployment'))
        expect((d.spec.template.spec.containers[0].env as Env[]).filter((e) => e.name.startsWith('OTEL_'))).toEqual([]);
    }
    expect(otelOf(ci)!.data).toMatchObject({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otlp-receiver.marketplace-ci-otel.svc:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_TRACES_SAMPLER_ARG: '1',
    });
    expect(namespaceSelectors(ci).filter((s) => s.policy === 'traces-to-collector')).toEqual([
      { policy: 'traces-to-collector', ns: 'marketplace-ci-otel' },
    ]);
    for (const d of byKind(ci, 'Deployment')) expect(d.spec.template.spec.containers[0].envFrom).toHaveLength(1);
  });
});

describe('monitoring on a default kube-prometheus-stack', () => {
  const rules = () =>
    one(prod, 'PrometheusRule', 'marketplace').spec.groups.flatMap((g: { rules: unknown[] }) => g.rules) as Array<{
      alert: string;
      expr: string;
      labels: Record<string, string>;
      annotations: Record<string, string>;
    }>;

  test('PodMonitors and the PrometheusRule carry the selector label from the params', () => {
    const release = paramsOf('prod')['monitoring-release'];
    expect(release).toBe('kube-prometheus-stack');
    for (const kind of ['PodMonitor', 'PrometheusRule']) {
      expect(byKind(prod, kind).length).toBeGreaterThan(0);
      for (const o of byKind(prod, kind)) expect(o.metadata.labels).toMatchObject({ release });
    }
  });

  test('every alert: severity, team and service labels, an absolute runbook URL from the params', () => {
    const base = paramsOf('prod')['runbook-base-url']!;
    expect(base).toMatch(/^https:\/\/[^#]+$/);
    for (const rule of rules()) {
      expect({ alert: rule.alert, labels: rule.labels }).toEqual({
        alert: rule.alert,
        labels: { severity: expect.stringMatching(/^(critical|warning)$/), team: 'marketplace', service: expect.any(String) },
      });
      // A templated service label must name a label the expression keeps.
      const templated = /^\{\{ \$labels\.(\w+) \}\}$/.exec(rule.labels.service!);
      if (templated)
        expect({ alert: rule.alert, keeps: new RegExp(`by \\([^)]*\\b${templated[1]}\\b`).test(rule.expr) }).toEqual({
          alert: rule.alert,
          keeps: true,
        });
      expect(rule.annotations.runbook_url).toBe(`${base}#${rule.alert.toLowerCase()}`);
    }
  });

  test("the alerts that select a namespace select the overlay's own (prod put in another namespace)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8s-ns-'));
    try {
      cpSync(join(root, 'k8s'), join(dir, 'k8s'), { recursive: true });
      const file = join(dir, 'k8s', 'overlays', 'prod', 'kustomization.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace(/^namespace: marketplace$/m, 'namespace: shop-prod'));
      const objects = objectsOf(checkK8s('--render', join(dir, 'k8s', 'overlays', 'prod')));
      const exprs = byKind(objects, 'PrometheusRule').flatMap((r) =>
        r.spec.groups.flatMap((g: { rules: Array<{ alert: string; expr: string }> }) => g.rules),
      ) as Array<{ alert: string; expr: string }>;
      const selecting = exprs.filter((r) => /namespace="/.test(r.expr));
      expect(selecting.map((r) => r.alert)).toEqual(expect.arrayContaining(['MarketplacePodsUnavailable', 'RabbitmqDiskAlarm']));
      for (const r of selecting)
        expect({ alert: r.alert, namespaces: [...r.expr.matchAll(/namespace="([^"]*)"/g)].map((m) => m[1]) }).toEqual({
          alert: r.alert,
          namespaces: ['shop-prod'],
        });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the error-ratio alert needs a minimum of traffic', () => {
    const rule = rules().find((r) => r.alert === 'MarketplaceHighErrorRatio')!;
    expect(rule.expr).toMatch(
      /\)\s*and\s+sum by \(namespace, service\) \(rate\(marketplace_http_request_duration_seconds_count\[5m\]\)\) > 0\.\d+/,
    );
  });

  test('the dashboard has saturation panels: event-loop lag, memory, restarts, CPU throttling', () => {
    const dashboard = one(prod, 'ConfigMap', 'marketplace-grafana-dashboard') as unknown as { data: Record<string, string> };
    const panels = (
      JSON.parse(dashboard.data['marketplace.json']!) as { panels: Array<{ title: string; targets?: Array<{ expr: string }> }> }
    ).panels;
    const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)).join('\n');
    for (const metric of [
      'nodejs_eventloop_lag_p99_seconds',
      'process_resident_memory_bytes',
      'kube_pod_container_status_restarts_total',
      'container_cpu_cfs_throttled_periods_total',
    ])
      expect(exprs).toContain(metric);
    // prom-client's default metrics, as packages/kit registers them (no prefix).
    expect(readFileSync(join(root, 'packages', 'kit', 'src', 'metrics.ts'), 'utf8')).toMatch(
      /collectDefaultMetrics\(\{ register: registry \}\)/,
    );
    expect(prodYaml).toContain('grafana_dashboard');
  });
});
