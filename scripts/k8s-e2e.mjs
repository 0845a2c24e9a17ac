#!/usr/bin/env node
// `npm run k8s:e2e`: the marketplace on a real Kubernetes (k8s/README.md "Kubernetes for
// real"). By default on a single-node cluster this script provides on this machine (root; the
// binaries built once into $MKT_K8S_CACHE, scripts/k8s/build.sh; scripts/k8s/cluster.sh up/down):
//
//   1. the cluster: binaries (cached), etcd, containerd, control plane, kubelet, kube-proxy,
//      kube-router enforcing the NetworkPolicies, CoreDNS, Traefik implementing the Gateway API
//   2. the six service images and the MongoDB/RabbitMQ stand-ins (`npm run images` builds, pushes
//      to the project's registry, attests and signs them; release/images.json has their digests):
//      each one's signature, SBOM and provenance attestations verified (an unsigned image, or one
//      changed since it was signed, stops the run before anything is applied); k8s/overlays/ci
//      applied with every image named by registry and digest (the node pulls them from the
//      registry; nothing imported) and the JWT, admin and internal Secrets: the migrate Jobs first, waited for until complete,
//      then the Deployments; every rollout waited for
//   3. the edge: prod's Gateway and HTTPRoutes (k8s/components/gateway-api) Programmed and Accepted
//      by Traefik (their status), HTTP redirected to HTTPS, HTTPS terminated with the run's
//      certificate (scripts/k8s/edge.mjs); then the journey (scripts/journey.mjs) through Traefik's
//      HTTPS entryPoint (the gateway Service's ClusterIP when no Gateway runs), traced: the ci overlay's
//      components/opentelemetry exports to a test OTLP/HTTP receiver (scripts/k8s/traces.mjs, in
//      namespace marketplace-ci-otel), and the gateway's and 2+ services' spans must arrive, each
//      naming its pod; then the dead-letter runbook (scripts/k8s/dead-letters.mjs): a poison
//      message dead-lettered, listed, replayed and dropped with k8s/jobs/dlq.yaml as written; then the
//      NetworkPolicies enforced (scripts/k8s/netpol.mjs): the allowed flows connect, the closed ones
//      (another service's port, the database from outside the app, the gateway's metrics port from
//      outside the monitoring namespace, a service's egress anywhere else) time out or are refused
//   4. two replicas of every service: load through the edge, then the rules
//   5. rolling update under load: every Deployment to a new image tag, then the rules
//   6. pod kill under load: a wallet and a consultation pod deleted with --grace-period=0
//   7. the prod overlay validated by this API server (apply --dry-run=server, operators' CRDs), and
//      again with its optional components/external-secrets (the External Secrets CRDs)
//   8. teardown, and the host compared with before (processes, links, chains, mounts, sysctls)
//
// Another cluster (kind, a platform team's): `--context NAME` and/or `--kubeconfig FILE` skips 1 and 8's
// cluster part, imports nothing (the images must be pullable or loaded: `--images-loaded`), and
// needs `--gateway-url URL` when the gateway Service's ClusterIP cannot be reached from here.
//
//   node scripts/k8s-e2e.mjs [--context NAME] [--kubeconfig FILE] [--gateway-url URL] [--images-loaded]
//                            [--roll-tag TAG] [--keep] [--skip traces,dlq,netpol,replicas,rolling,kill,prod]
//
// Logs: .dev/k8s/ (the cluster's daemons, every pod's log on failure).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { journey } from './journey.mjs';
import { messageOf } from './lib/errors.mjs';
import { deadLetterRunbook } from './k8s/dead-letters.mjs';
import { checkInvariants, prepareLoad, startLoad } from './k8s/load.mjs';
import { networkPolicies } from './k8s/netpol.mjs';
import { edgeAnswers, edgeCertificate, gatewayOf, gatewayProgrammed, trustCa } from './k8s/edge.mjs';
import { judgeTraces, receivedSpans, receiverManifest, RECEIVER_NAMESPACE } from './k8s/traces.mjs';
import { imagesYaml, kustomizeImages, readRecord, startRegistry } from './lib/supply-chain.mjs';
import { verifyRecord } from './supply-chain.mjs';

/* global AbortSignal */
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const WORK = join(root, '.dev', 'k8s');
const VERSION = process.env.MKT_K8S_VERSION ?? '1.34.4';
const CACHE = join(process.env.MKT_K8S_CACHE ?? join(process.env.HOME ?? '/root', '.cache', 'mkt-k8s'), `v${VERSION}`);
const NAMESPACE = 'marketplace-ci';
const DEPLOYMENTS = ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'];
const STATEFULSETS = ['mongo', 'rabbitmq'];
const IMAGES = [
  ...DEPLOYMENTS.map((name) => `localhost/marketplace/${name}:dev`),
  'localhost/marketplace-standin/mongo-java-server:dev',
  'localhost/marketplace-standin/rabbitmq:dev',
];
const LOAD_SECONDS = Number(process.env.K8S_LOAD_SECONDS ?? 20);
const RECORD = join(root, 'release', 'images.json');
// The name each image has in the manifests → its repository in the registry (release/images.json):
// the six services (marketplace/<service>), the stand-ins under the names the dev overlay gives
// MongoDB and RabbitMQ, and any other image pushed under the name the manifests use for it
// (see pinnedNames).
const PINNED = {
  ...Object.fromEntries(DEPLOYMENTS.map((name) => [`marketplace/${name}`, `marketplace/${name}`])),
  mongo: 'marketplace-standin/mongo-java-server',
  rabbitmq: 'marketplace-standin/rabbitmq',
};
/** PINNED and every other recorded image by its repository (an image the script builds later is deployed and verified too). */
const pinnedNames = (record) => ({
  ...Object.fromEntries(Object.keys(record.images).map((repository) => [repository, repository])),
  ...PINNED,
});

// ---- options
const argv = process.argv.slice(2);
const option = (name) => {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
};
const context = option('--context');
const externalConfig = option('--kubeconfig');
const external = Boolean(context || externalConfig);
const keep = argv.includes('--keep');
const skip = new Set(argv.flatMap((arg, i) => (argv[i - 1] === '--skip' ? arg.split(',') : [])));
let gatewayUrl = option('--gateway-url');

const say = (line) => console.log(`[k8s-e2e] ${line}`);
const secrets = new Set();
const redact = (text) => {
  let out = String(text);
  for (const secret of secrets) if (secret.length >= 8) out = out.split(secret).join('***');
  return out;
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (since) => ((Date.now() - since) / 1000).toFixed(0);

// ---- commands
const kubeconfig = external ? (externalConfig ?? process.env.KUBECONFIG) : join(CACHE, 'cluster', 'pki', 'admin.kubeconfig');
// The gateway Service's address on the cluster this script provides (its service range is
// 10.96.0.0/16): fixed, so the checkout's return address is known before the apply.
const OWN_GATEWAY_IP = '10.96.80.80';
// Ours when it is built (any API server within one minor version), else KUBECTL or the one on PATH.
const kubectlBin =
  process.env.KUBECTL ?? (existsSync(join(CACHE, 'bin', 'kubectl')) || !external ? join(CACHE, 'bin', 'kubectl') : 'kubectl');
const kubeArgs = () => [...(kubeconfig ? ['--kubeconfig', kubeconfig] : []), ...(context ? ['--context', context] : [])];
const clusterEnv = () => ({ ...process.env, MKT_K8S_LOGS: join(WORK, 'logs') });

/**
 * Runs a command; output captured (and appended to `log`); throws with its tail unless `check` is false.
 * @param {string} command
 * @param {string[]} args
 * @param {{ input?: string, check?: boolean, log?: string, env?: NodeJS.ProcessEnv }} [options]
 */
function run(command, args, { input, check = true, log, env } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: root,
      env: env ?? process.env,
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const file = log ? createWriteStream(log, { flags: 'a' }) : null;
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
      file?.write(chunk);
    });
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
      file?.write(chunk);
    });
    if (input !== undefined) child.stdin?.end(input);
    child.once('error', reject);
    child.once('close', (code) => {
      file?.end();
      if (code === 0 || !check) return resolve({ code, stdout: stdout.trim(), stderr: stderr.trim() });
      reject(
        new Error(`${command.split('/').pop()} ${args.slice(0, 8).join(' ')} exited ${code}\n${redact((stderr || stdout).slice(-3000))}`),
      );
    });
  });
}
/**
 * A command whose progress lines go straight to our output (the cluster script, the build).
 * @param {string} command
 * @param {string[]} args
 * @param {{ env?: NodeJS.ProcessEnv }} [options]
 */
function runLoud(command, args, { env } = {}) {
  const result = spawnSync(command, args, { cwd: root, env: env ?? process.env, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) throw new Error(`${relative(root, command)} ${args.join(' ')} exited ${result.status ?? result.signal}`);
}
const kubectl = (args, options) => run(kubectlBin, [...kubeArgs(), ...args], options);
const k = async (args, options) => (await kubectl(args, options)).stdout;
const kn = (args, options) => k(['-n', NAMESPACE, ...args], options);

// ---- results, printed at the end
const results = []; // [scenario, rule, ok, detail]
const timings = [];
async function phase(name, body) {
  const started = Date.now();
  say(`== ${name}`);
  try {
    const value = await body();
    timings.push([name, seconds(started), 'ok']);
    return value;
  } catch (err) {
    timings.push([name, seconds(started), 'FAILED']);
    throw err;
  }
}

function table(rows) {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  for (const [index, row] of rows.entries()) {
    console.log(`  ${row.map((cell, column) => String(cell).padEnd(widths[column])).join('  ')}`.trimEnd());
    if (index === 0) console.log(`  ${widths.map((width) => '-'.repeat(width)).join('  ')}`);
  }
}

// ---- steps
async function buildCluster() {
  runLoud(join(root, 'scripts/k8s/build.sh'), []);
}

async function provideCluster() {
  runLoud(join(root, 'scripts/k8s/cluster.sh'), ['up'], { env: clusterEnv() });
  // The Gateway API implementation the cluster runs (scripts/k8s/cluster.sh edge): its class, or none.
  const line = spawnSync(join(root, 'scripts/k8s/cluster.sh'), ['edge'], { env: clusterEnv(), encoding: 'utf8' }).stdout;
  const className = /class=(\S*)/.exec(line)?.[1];
  if (!className) say('no Gateway API implementation on the cluster (MKT_K8S_GATEWAY=none): the run reaches the gateway Service');
  else edgeClass = className;
}
/** The GatewayClass the own cluster's Traefik serves, else null (another cluster, or MKT_K8S_GATEWAY=none). */
let edgeClass = null;
/** The Gateway as the ci overlay renders it (host, ports), once the run goes through it. */
let edge = null;

/**
 * The ci overlay's Gateway (k8s/components/gateway-api with ci's params and ports), its listener
 * certificate made for its host (the run's CA, trusted by this process) and the edge's URL.
 */
async function edgeOfOverlay() {
  const rendered = await k(['kustomize', join(root, 'k8s/overlays/ci')]);
  // The Gateway's document alone, read by kubectl as JSON (one object: one JSON document).
  const documents = rendered.split(/^---$/m).filter((doc) => /^kind: Gateway$/m.test(doc));
  const objects = await Promise.all(
    documents.map(async (doc) => JSON.parse(await k(['create', '--dry-run=client', '-o', 'json', '-f', '-'], { input: doc }))),
  );
  const gateway = gatewayOf({ items: objects });
  if (gateway.className !== edgeClass)
    throw new Error(`the ci overlay's Gateway is of class ${gateway.className}, the cluster's Traefik serves ${edgeClass}`);
  const certificate = edgeCertificate(join(WORK, 'edge-tls'), gateway.host);
  trustCa(certificate.ca);
  return { ...gateway, certificate, url: `https://${gateway.host}:${gateway.httpsPort}` };
}

async function requireImages() {
  const missing = IMAGES.filter((image) => spawnSync('podman', ['image', 'exists', image]).status !== 0);
  if (missing.length === 0) return;
  say(`building the missing images with scripts/containers.mjs: ${missing.join(', ')}`);
  const steps = ['setup', 'base'];
  if (missing.some((image) => image.startsWith('localhost/marketplace/'))) steps.push('build');
  if (missing.some((image) => image.includes('standin'))) steps.push('standins');
  runLoud(process.execPath, [join(root, 'scripts/containers.mjs'), ...steps]);
}

/** The JWT key pair, admin and internal token of `node scripts/run.mjs env --sandbox-payments`. */
async function developmentEnv() {
  const text = (await run(process.execPath, [join(root, 'scripts/run.mjs'), 'env', '--sandbox-payments'])).stdout;
  const env = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (match) env[match[1]] = match[2].startsWith('"') ? JSON.parse(match[2]) : match[2];
  }
  for (const key of ['JWT_PRIVATE_KEY', 'INTERNAL_API_TOKEN', 'ADMIN_PASSWORD']) if (env[key]) secrets.add(env[key]);
  env.ADMIN_EMAIL ??= 'admin@marketplace.local';
  return env;
}

/**
 * The images this run deploys, by digest: pushed, attested and signed by `npm run images` (its
 * publish step runs again when the record lacks one or names another build of a local image),
 * then each verified (scripts/supply-chain.mjs: signature, SBOM and provenance attestations with
 * the project's public key). Any refusal stops the run before anything is applied. The registry
 * stays up for the node's pulls until the end of the run.
 */
let images = null;
async function pushedAndVerified() {
  const stale = () => {
    if (!existsSync(RECORD)) return 'no release/images.json';
    const record = readRecord(RECORD);
    for (const [local, repository] of IMAGES.map((image) => [image, image.replace(/^localhost\//, '').replace(/:dev$/, '')])) {
      const id = spawnSync('podman', ['image', 'inspect', '--format', '{{.Id}}', local], { encoding: 'utf8' }).stdout.trim();
      if (record.images[repository]?.imageId !== id) return `${repository} not pushed since it was built`;
    }
    return null;
  };
  const why = stale();
  if (why) {
    say(`${why}: scripts/containers.mjs publish`);
    runLoud(process.execPath, [join(root, 'scripts/containers.mjs'), 'publish']);
  }
  const registry = await startRegistry({ storage: join(root, '.dev', 'registry', 'storage'), log: join(WORK, 'registry.log') });
  registryStop = registry.stop;
  const record = readRecord(RECORD);
  if (record.registry !== registry.address)
    throw new Error(`release/images.json names ${record.registry}, the registry is on ${registry.address}`);
  const started = Date.now();
  const names = pinnedNames(record);
  for (const repository of Object.values(PINNED))
    if (!record.images[repository]) throw new Error(`${repository}: not in release/images.json (npm run images pushes it)`);
  await verifyRecord(record, { only: [...new Set(Object.values(names))], log: say });
  say(`${Object.keys(record.images).length} images verified (signature, SBOM, provenance) in ${seconds(started)} s`);
  images = kustomizeImages(record, names);
  results.push([
    'images',
    'every image deployed is signed, attested and pinned by digest',
    'ok',
    `${images.length} images from ${record.registry}`,
  ]);
}
/** @type {() => Promise<unknown>} */
let registryStop = async () => undefined;

/** An image as this run deploys it: by the registry and digest it verified, else (images loaded) its local name. */
const deployedImage = (name, local) => {
  const entry = images?.find((e) => e.name === name);
  return entry ? `${entry.newName}@${entry.digest}` : local;
};

/**
 * The test OTLP/HTTP receiver (scripts/k8s/traces.mjs) in its own namespace, before the services
 * start exporting to it (the ci overlay's components/opentelemetry names it).
 */
let receiverCreated = false;
async function traceReceiver() {
  const created = await kubectl(['create', 'namespace', RECEIVER_NAMESPACE], { check: false });
  if (created.code !== 0)
    throw new Error(
      `namespace ${RECEIVER_NAMESPACE} could not be created (${created.stderr?.trim() || 'exists already?'}): another run may be using it`,
    );
  receiverCreated = true;
  const manifest = receiverManifest(deployedImage('marketplace/gateway', 'localhost/marketplace/gateway:dev'));
  manifest.items = manifest.items.filter((item) => item.kind !== 'Namespace');
  await kubectl(['apply', '-f', '-'], { input: JSON.stringify(manifest) });
}

/** After the journey: the gateway's and at least two services' spans arrived, each naming its pod. */
async function tracesArrived() {
  await k(['-n', RECEIVER_NAMESPACE, 'rollout', 'status', 'deploy/otlp-receiver', '--timeout=120s']);
  const podsOf = {};
  for (const pod of JSON.parse(await kn(['get', 'pods', '-o', 'json'])).items) {
    const name = pod.metadata.labels?.['app.kubernetes.io/name'];
    if (name) (podsOf[name] ??= []).push(pod.metadata.name);
  }
  const started = Date.now();
  let verdict;
  for (;;) {
    verdict = judgeTraces(await receivedSpans(k), podsOf, NAMESPACE);
    if (verdict[0] || Date.now() - started > 60_000) break;
    await sleep(2_000);
  }
  say(`traces: ${verdict[1]}`);
  results.push([
    'traces',
    'spans of the gateway and 2+ services reached the OTLP receiver, each naming its pod (k8s.pod.name)',
    verdict[0] ? 'ok' : 'BROKEN',
    verdict[1],
  ]);
}

/** Whether this run created the namespace (only then does the teardown delete it). */
let namespaceCreated = false;

async function deploy(dev) {
  if (edgeClass) edge = await edgeOfOverlay();
  const created = await kubectl(['create', 'namespace', NAMESPACE], { check: false });
  // A namespace already there on another cluster is another run's (or someone's): never reused or deleted.
  if (created.code !== 0)
    throw new Error(
      `namespace ${NAMESPACE} could not be created (${created.stderr?.trim() || 'exists already?'}): another run may be using it; delete it or wait`,
    );
  namespaceCreated = true;
  const secret = (name, data) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NAMESPACE }, stringData: data });
  const list = {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      // The gateway's key set (docs/key-rotation.md): one key, the current one.
      secret('marketplace-jwt', { 'gateway-1.pem': dev.JWT_PRIVATE_KEY, current: 'gateway-1' }),
      secret('marketplace-admin', { email: dev.ADMIN_EMAIL, password: dev.ADMIN_PASSWORD }),
      secret('marketplace-internal', { token: dev.INTERNAL_API_TOKEN }),
      // The Gateway's HTTPS listener's certificate (prod: cert-manager's, or yours).
      ...(edge
        ? [
            {
              ...secret('marketplace-tls', { 'tls.crt': edge.certificate.cert, 'tls.key': edge.certificate.key }),
              type: 'kubernetes.io/tls',
            },
          ]
        : []),
    ],
  };
  // On stdin: no secret on a command line.
  await kubectl(['apply', '-f', '-'], { input: JSON.stringify(list) });
  // The checkout's return address is the gateway as this script reaches it (the edge, else the
  // gateway Service): a small overlay over k8s/overlays/ci, made for this run.
  if (edge) gatewayUrl = edge.url;
  if (!external) gatewayUrl ??= `http://${OWN_GATEWAY_IP}:8080`;
  await applyOverlay();
  if (!gatewayUrl) {
    // Another cluster, no --gateway-url: its gateway Service's ClusterIP (reachable from here when
    // this runs on a node), known only now; applied again with it (the services roll once).
    gatewayUrl = `http://${await kn(['get', 'service', 'gateway', '-o', 'jsonpath={.spec.clusterIP}'])}:8080`;
    await applyOverlay();
  }
  await waitForRollouts();
}

async function applyOverlay() {
  const overlay = join(WORK, 'overlay');
  rmSync(overlay, { recursive: true, force: true });
  mkdirSync(overlay, { recursive: true });
  const origin = new URL(gatewayUrl ?? 'http://gateway.invalid').origin;
  writeFileSync(
    join(overlay, 'kustomization.yaml'),
    [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      `resources: [${relative(overlay, join(root, 'k8s/overlays/ci'))}]`,
      ...(images ? imagesYaml(images) : []),
      'configMapGenerator:',
      '  - name: marketplace-config',
      '    behavior: merge',
      `    literals: [CHECKOUT_REDIRECT_ORIGINS=${origin}, PUBLIC_URL=${origin}]`,
      'patches:',
      ...(external
        ? []
        : [
            '  - target: { kind: Service, name: gateway }',
            `    patch: '[{"op": "add", "path": "/spec/clusterIP", "value": "${OWN_GATEWAY_IP}"}]'`,
          ]),
      // No Gateway API implementation to serve them (another cluster, MKT_K8S_GATEWAY=none): the
      // Gateway and its HTTPRoutes left out, the gateway Service is the way in.
      ...(edge
        ? []
        : ['Gateway', 'HTTPRoute'].flatMap((kind) => [
            `  - target: { group: gateway.networking.k8s.io, kind: ${kind} }`,
            `    patch: '{"$patch": "delete", "apiVersion": "gateway.networking.k8s.io/v1", "kind": "${kind}", "metadata": {"name": "any"}}'`,
          ])),
      '',
    ].join('\n'),
  );
  await migrateFirst(overlay);
  const applied = await kubectl(['apply', '--server-side', '-k', overlay]);
  say(`applied k8s/overlays/ci (${origin}): ${applied.stdout.split('\n').length} objects`);
}

/**
 * The release's migrations before its Deployments, as a GitOps tool's PreSync hook orders them
 * (k8s/README.md "Migrations"): the previous run's Jobs deleted (a Job's template cannot change),
 * everything but the Deployments applied, every `<service>-migrate` Job waited for until it
 * completed. Only then are the Deployments applied.
 */
async function migrateFirst(overlay) {
  await kn(['delete', 'job', '-l', 'app.kubernetes.io/component=migrations', '--ignore-not-found', '--wait=true']);
  const rendered = await k(['kustomize', overlay]);
  const withoutDeployments = rendered
    .split(/^---$/m)
    .filter((doc) => !/^kind: Deployment$/m.test(doc))
    .join('---');
  await kubectl(['apply', '--server-side', '-f', '-'], { input: withoutDeployments });
  const started = Date.now();
  await kn(['wait', '--for=condition=complete', 'job', '-l', 'app.kubernetes.io/component=migrations', '--timeout=300s']);
  say(`every migrate Job complete after ${seconds(started)} s; now the Deployments`);
}

async function waitForRollouts(timeout = '300s') {
  const started = Date.now();
  await Promise.all([
    ...DEPLOYMENTS.map((name) => kn(['rollout', 'status', `deploy/${name}`, `--timeout=${timeout}`])),
    ...STATEFULSETS.map((name) => kn(['rollout', 'status', `statefulset/${name}`, `--timeout=${timeout}`])),
  ]);
  say(`every rollout complete after ${seconds(started)} s`);
}

async function gatewayReachable() {
  if (edge) {
    // The status Traefik wrote, then the listeners answering as prod's edge does.
    for (const row of await gatewayProgrammed(kn)) results.push(row);
    for (const row of await edgeAnswers(edge)) results.push(row);
  }
  if (!gatewayUrl) {
    const ip = await kn(['get', 'service', 'gateway', '-o', 'jsonpath={.spec.clusterIP}']);
    gatewayUrl = `http://${ip}:8080`;
  }
  const started = Date.now();
  for (;;) {
    try {
      const res = await fetch(`${gatewayUrl}/readyz`, { signal: AbortSignal.timeout(3_000) });
      if (res.status === 200) break;
    } catch {
      /* not yet */
    }
    if (Date.now() - started > 60_000) throw new Error(`the gateway Service at ${gatewayUrl} does not answer /readyz 200`);
    await sleep(500);
  }
  say(`gateway ${edge ? "through Traefik's Gateway" : 'Service'} ${gatewayUrl}: /readyz 200`);
  await upstreamsReachable(started);
}

/**
 * A read of each service through the gateway, until none is answered 502, 503 or 504 or left
 * unanswered (the gateway could not reach it): a rollout is complete when the pods are Ready, and
 * a Service's rules on the node may follow a moment later. An answer of the service's own (any other status,
 * 401 included) shows the gateway reached it.
 */
async function upstreamsReachable(started) {
  const reads = {
    wallet: '/wallets/topup/k8s-e2e-probe/status',
    catalog: '/physical-products/categories',
    crm: '/customers',
    consultation: '/consultations',
    review: '/reviews/by-entity',
  };
  for (const [service, path] of Object.entries(reads)) {
    for (;;) {
      let status = 0;
      try {
        status = (await fetch(`${gatewayUrl}${path}`, { signal: AbortSignal.timeout(3_000) })).status;
      } catch {
        /* not yet */
      }
      if (status !== 0 && status !== 502 && status !== 503 && status !== 504) break;
      if (Date.now() - started > 90_000) throw new Error(`${service} not reached through the gateway (${path}: ${status || 'no answer'})`);
      await sleep(500);
    }
  }
  say('every service reached through the gateway');
}

/** Every Deployment at two ready replicas, each pod Ready, nothing restarting. */
async function replicaTable() {
  const deployments = JSON.parse(await kn(['get', 'deploy', '-o', 'json'])).items;
  const rows = [['deployment', 'image', 'ready', 'updated', 'available']];
  for (const d of deployments)
    rows.push([
      d.metadata.name,
      d.spec.template.spec.containers[0].image,
      `${d.status.readyReplicas ?? 0}/${d.spec.replicas}`,
      d.status.updatedReplicas ?? 0,
      d.status.availableReplicas ?? 0,
    ]);
  table(rows);
  return deployments;
}

async function endpointsOf(service) {
  const slices = JSON.parse(await kn(['get', 'endpointslices', '-l', `kubernetes.io/service-name=${service}`, '-o', 'json'])).items;
  return slices.flatMap((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready).map((e) => e.addresses[0]));
}

async function scenario(name, admin, during) {
  const prepared = await prepareLoad(gatewayUrl, admin, { tag: name.split(' ')[0] });
  say(
    `${name}: ${prepared.buyers.length} buyers race for ${prepared.slots.length} one-place paid slots; ${prepared.payers.length} payers → ${prepared.payees.length} payees`,
  );
  const load = startLoad(prepared, { workers: 3 });
  let duringResult;
  try {
    duringResult = await during();
  } finally {
    const tally = await load.stop();
    say(
      `${name}: load stopped after ${tally.seconds.toFixed(0)} s: ${tally.requests} writes; ${[...tally.statuses].map(([s, n]) => `${n}× ${s}`).join(', ')}`,
    );
    const rows = await checkInvariants(prepared, tally);
    for (const [rule, ok, detail] of rows) results.push([name, rule, ok ? 'ok' : 'BROKEN', detail]);
  }
  return duringResult;
}

async function twoReplicas(admin) {
  const deployments = await replicaTable();
  const short = deployments.filter((d) => (d.status.readyReplicas ?? 0) < 2).map((d) => d.metadata.name);
  results.push(['two replicas', 'every Deployment 2/2 ready', short.length === 0 ? 'ok' : 'BROKEN', short.join(', ') || '6 Deployments']);
  const endpoints = {};
  for (const name of DEPLOYMENTS) endpoints[name] = (await endpointsOf(name)).length;
  const fewer = Object.entries(endpoints).filter(([, n]) => n < 2);
  results.push([
    'two replicas',
    'every Service has 2 ready endpoints',
    fewer.length === 0 ? 'ok' : 'BROKEN',
    Object.entries(endpoints)
      .map(([name, n]) => `${name} ${n}`)
      .join(', '),
  ]);
  await scenario('two replicas', admin, () => sleep(LOAD_SECONDS * 1000));
}

async function rollingUpdate(admin) {
  // The images are pinned by digest: `kubectl rollout restart` (a new pod template: every pod
  // replaced), or on another cluster the tag given with --roll-tag (pushed there by you).
  const tag = external ? option('--roll-tag') : undefined;
  await scenario('rolling update', admin, async () => {
    await sleep(3_000);
    const started = Date.now();
    const before = JSON.parse(await kn(['get', 'pods', '-l', 'marketplace/tier in (edge,service)', '-o', 'json'])).items.map(
      (p) => p.metadata.name,
    );
    if (tag) {
      for (const name of DEPLOYMENTS) await kn(['set', 'image', `deploy/${name}`, `${name}=localhost/marketplace/${name}:${tag}`]);
      say(`rolling update: every Deployment set to :${tag}`);
    } else {
      await kn(['rollout', 'restart', ...DEPLOYMENTS.map((name) => `deploy/${name}`)]);
      say('rolling update: every Deployment restarted (kubectl rollout restart: a new pod template)');
    }
    await Promise.all(DEPLOYMENTS.map((name) => kn(['rollout', 'status', `deploy/${name}`, '--timeout=600s'])));
    const after = JSON.parse(await kn(['get', 'pods', '-l', 'marketplace/tier in (edge,service)', '-o', 'json'])).items;
    // Old pods may still be draining (terminating): replaced all the same.
    const replaced = before.filter((pod) => !after.some((p) => p.metadata.name === pod && !p.metadata.deletionTimestamp)).length;
    say(`rolling update: all six rolled out in ${seconds(started)} s; ${replaced} of ${before.length} pods replaced`);
    await replicaTable();
    results.push([
      'rolling update',
      tag ? 'every Deployment rolled to the new tag' : 'every Deployment rolled (rollout restart)',
      'ok',
      `${replaced}/${before.length} pods replaced in ${seconds(started)} s (maxUnavailable 0, maxSurge 1)`,
    ]);
    await sleep(5_000); // load on the new pods too
  });
}

async function podKill(admin) {
  await scenario('pod kill', admin, async () => {
    await sleep(3_000);
    const victims = {};
    for (const name of ['wallet', 'consultation']) {
      const pods = JSON.parse(await kn(['get', 'pods', '-l', `app.kubernetes.io/name=${name}`, '-o', 'json'])).items;
      // A serving pod: Ready, not one of the rolling update's old pods still draining.
      const serving = pods.filter(
        (p) => !p.metadata.deletionTimestamp && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      if (serving.length < 2) throw new Error(`${name}: ${serving.length} serving pods before the kill, not 2`);
      victims[name] = serving[0].metadata.name;
      await kn(['delete', 'pod', victims[name], '--grace-period=0', '--force', '--wait=false'], { check: false });
      say(`pod kill: ${victims[name]} deleted (--grace-period=0 --force)`);
    }
    const started = Date.now();
    // Back: two Ready pods, neither of them the one killed nor terminating.
    await Promise.all(
      ['wallet', 'consultation'].map(async (name) => {
        for (;;) {
          const pods = JSON.parse(await kn(['get', 'pods', '-l', `app.kubernetes.io/name=${name}`, '-o', 'json'])).items;
          const ready = pods.filter(
            (p) =>
              p.metadata.name !== victims[name] &&
              !p.metadata.deletionTimestamp &&
              p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
          );
          if (ready.length >= 2) return;
          if (Date.now() - started > 180_000) throw new Error(`${name}: not back to 2 ready pods within 180 s`);
          await sleep(500);
        }
      }),
    );
    say(`pod kill: wallet and consultation back to 2 ready replicas after ${seconds(started)} s`);
    results.push(['pod kill', 'the Deployments replaced the killed pods', 'ok', `2/2 ready again after ${seconds(started)} s`]);
    await sleep(LOAD_SECONDS * 500);
  });
}

/**
 * The optional components prod leaves commented out (its kustomization.yaml: `# - ../../components/<name>`),
 * dry-run too, each enabled in a copy of k8s/, with the CRDs of its kinds from the Go module proxy.
 */
const OPTIONAL_COMPONENTS = [
  {
    name: 'external-secrets',
    crds: {
      module: 'github.com/external-secrets/external-secrets',
      version: 'v1.3.2',
      files: [
        'config/crds/bases/external-secrets.io_externalsecrets.yaml',
        'config/crds/bases/external-secrets.io_secretstores.yaml',
        'config/crds/bases/external-secrets.io_clustersecretstores.yaml',
      ],
    },
  },
];

/** A copy of k8s/ (in .dev/k8s/) whose prod overlay lists the optional components too: its overlay folder. */
function prodWithOptionalComponents() {
  const copy = join(WORK, 'k8s-optional');
  rmSync(copy, { recursive: true, force: true });
  cpSync(join(root, 'k8s'), copy, { recursive: true });
  const file = join(copy, 'overlays', 'prod', 'kustomization.yaml');
  let text = readFileSync(file, 'utf8');
  for (const { name } of OPTIONAL_COMPONENTS) {
    const line = `  # - ../../components/${name}`;
    if (!text.includes(line)) throw new Error(`k8s/overlays/prod/kustomization.yaml no longer has ${JSON.stringify(line)}`);
    text = text.replace(line, `  - ../../components/${name}`);
  }
  writeFileSync(file, text);
  return join(copy, 'overlays', 'prod');
}

/** The operators' CRDs, from the Go module proxy (the same sources deploy/check-k8s.mjs uses), and the optional components'. */
async function prodDryRun() {
  const { CRD_SOURCES } = await import('../deploy/check-k8s.mjs');
  const { go, goEnv } = await import('./lib/go-tools.mjs');
  const files = [];
  for (const source of [...CRD_SOURCES, ...OPTIONAL_COMPONENTS.map((c) => c.crds)]) {
    const info = JSON.parse((await run(go(), ['mod', 'download', '-json', `${source.module}@${source.version}`], { env: goEnv() })).stdout);
    for (const file of source.files) files.push(join(info.Dir, file));
  }
  // Only the CRDs the cluster lacks are installed, and only those are deleted after: on a cluster
  // that runs the operators (another cluster than ours), deleting their CRDs would delete every
  // resource of those kinds with them, and applying ours could change the versions installed.
  const missing = [];
  for (const file of files) {
    const present = await k(['get', '-f', file, '-o', 'name', '--ignore-not-found'], { check: false });
    if (!present.trim()) missing.push(file);
  }
  if (missing.length > 0) {
    await k(['apply', '--server-side', ...missing.flatMap((file) => ['-f', file])]);
    await k(['wait', '--for=condition=Established', '--timeout=60s', ...missing.flatMap((file) => ['-f', file])]);
  }
  say(
    `CRDs: ${[...CRD_SOURCES, ...OPTIONAL_COMPONENTS.map((c) => c.crds)].map((s) => `${s.module}@${s.version}`).join(', ')}; installed for the run: ${missing.length} of ${files.length} files (the others were there)`,
  );
  const created = await kubectl(['create', 'namespace', 'marketplace'], { check: false });
  try {
    // Pod Security `restricted` in warn mode on the namespace we made (the overlay's Namespace sets it
    // too, but a dry-run does not store labels): the API server then names every workload whose pods
    // it would refuse, and one named fails the run.
    if (created.code === 0)
      await k([
        'label',
        'namespace',
        'marketplace',
        'pod-security.kubernetes.io/warn=restricted',
        'pod-security.kubernetes.io/warn-version=v1.33',
      ]);
    const dryRun = async (overlay) => {
      const out = await kubectl(['apply', '--dry-run=server', '--server-side', '-k', overlay]);
      const refused = out.stderr.split('\n').filter((line) => /violate PodSecurity/.test(line));
      if (refused.length > 0) throw new Error(`Pod Security restricted would refuse pods of the prod overlay:\n${refused.join('\n')}`);
      const lines = out.stdout.split('\n').filter(Boolean);
      const kinds = {};
      for (const line of lines) {
        const kind = line.split('/')[0].split('.')[0];
        kinds[kind] = (kinds[kind] ?? 0) + 1;
      }
      return { lines, kinds };
    };
    const { lines, kinds } = await dryRun(join(root, 'k8s/overlays/prod'));
    results.push([
      'prod overlay',
      'kubectl apply --dry-run=server (this API server, the operators’ and the Gateway API CRDs; Pod Security restricted)',
      'ok',
      `${lines.length} objects accepted: ${Object.entries(kinds)
        .map(([kind, n]) => `${n} ${kind}`)
        .join(', ')}`,
    ]);
    const optional = await dryRun(prodWithOptionalComponents());
    const added = Object.entries(optional.kinds).filter(([kind, n]) => n !== (kinds[kind] ?? 0));
    results.push([
      'prod overlay',
      `with ${OPTIONAL_COMPONENTS.map((c) => `components/${c.name}`).join(', ')}: kubectl apply --dry-run=server (their CRDs)`,
      added.length > 0 ? 'ok' : 'BROKEN',
      `${optional.lines.length} objects accepted, ${added.map(([kind, n]) => `${n - (kinds[kind] ?? 0)} ${kind}`).join(', ') || 'none'} more`,
    ]);
  } finally {
    if (created.code === 0) await k(['delete', 'namespace', 'marketplace', '--wait=false'], { check: false });
    if (missing.length > 0) await k(['delete', '--wait=false', ...missing.flatMap((file) => ['-f', file])], { check: false });
  }
}

/** For a failure: what the pods say (describe of the ones not Ready, every pod's log into .dev/k8s/pods/). */
async function diagnose() {
  try {
    console.log(await kn(['get', 'pods', '-o', 'wide'], { check: false }));
    const pods = JSON.parse(await kn(['get', 'pods', '-o', 'json'], { check: false })).items ?? [];
    mkdirSync(join(WORK, 'pods'), { recursive: true });
    for (const pod of pods) {
      const name = pod.metadata.name;
      const logs = await kn(['logs', name, '--all-containers', '--tail=-1'], { check: false });
      writeFileSync(join(WORK, 'pods', `${name}.log`), redact(logs));
      const previous = await kn(['logs', name, '--previous', '--tail=200'], { check: false });
      if (previous) writeFileSync(join(WORK, 'pods', `${name}.previous.log`), redact(previous));
      const ready = pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      const restarts = (pod.status.containerStatuses ?? []).reduce((n, c) => n + c.restartCount, 0);
      if (!ready || restarts > 0) {
        say(`--- kubectl describe pod ${name} (ready ${ready}, restarts ${restarts})`);
        console.log(redact((await kn(['describe', 'pod', name], { check: false })).split('\n').slice(-40).join('\n')));
        say(`--- kubectl logs ${name} (last 30 lines)`);
        console.log(redact(logs.split('\n').slice(-30).join('\n')));
        if (previous) {
          say(`--- kubectl logs --previous ${name} (last 30 lines)`);
          console.log(redact(previous.split('\n').slice(-30).join('\n')));
        }
      }
    }
    say(`every pod's log: ${relative(root, join(WORK, 'pods'))}/`);
    const events = await kn(['get', 'events', '--sort-by=.lastTimestamp'], { check: false });
    console.log(events.split('\n').slice(-25).join('\n'));
  } catch (err) {
    say(`diagnosis failed: ${messageOf(err)}`);
  }
}

/** For a failure on our own cluster: the last errors each daemon logged (the whole logs in .dev/k8s/logs/). */
function daemonClues() {
  const dir = join(WORK, 'logs');
  if (!existsSync(dir)) return;
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.log'))) {
    // klog's error lines (E1125 …), containerd's and etcd's level=error / "level":"error".
    const lines = readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .filter((line) => /^E\d{4} |level=error|"level":"error"/.test(line))
      .slice(-8);
    if (lines.length === 0) continue;
    say(`--- ${file}: last ${lines.length} errors`);
    for (const line of lines) console.log(`  ${redact(line).slice(0, 400)}`);
  }
}

async function teardown() {
  if (external) {
    if (receiverCreated) await k(['delete', 'namespace', RECEIVER_NAMESPACE, '--wait=true', '--timeout=120s'], { check: false });
    if (!namespaceCreated) return true;
    say(`deleting namespace ${NAMESPACE}`);
    await k(['delete', 'namespace', NAMESPACE, '--wait=true', '--timeout=120s'], { check: false });
    return true;
  }
  const started = Date.now();
  runLoud(join(root, 'scripts/k8s/cluster.sh'), ['down'], { env: clusterEnv() });
  const check = spawnSync(join(root, 'scripts/k8s/cluster.sh'), ['check'], { env: clusterEnv(), stdio: ['ignore', 'inherit', 'inherit'] });
  timings.push(['teardown', seconds(started), check.status === 0 ? 'ok' : 'LEFT SOMETHING']);
  return check.status === 0;
}

// ---- main
mkdirSync(WORK, { recursive: true });
rmSync(join(WORK, 'pods'), { recursive: true, force: true });
if (!external && process.getuid?.() !== 0) {
  console.error('[k8s-e2e] the single-node cluster needs root (kubelet, containerd, iptables); or give --context for a cluster of yours');
  process.exit(2);
}
const begun = Date.now();
/** @type {unknown} */
let failure = null;
let interrupted = false;
let cleaning = null;
const cleanUp = async () => {
  cleaning ??= (async () => {
    if (keep) {
      say(`--keep: the cluster stays up (KUBECONFIG=${kubeconfig}); scripts/k8s/cluster.sh down to stop it`);
      return true;
    }
    await registryStop().catch((err) => say(`stopping the registry: ${err.message}`));
    return teardown();
  })();
  return cleaning;
};
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    interrupted = true;
    say(`${signal}: tearing down`);
    void cleanUp().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}
try {
  if (!external) {
    await phase('build (cached after the first)', buildCluster);
    await phase('cluster up', provideCluster);
  } else say(`using the cluster of ${context ? `context ${context}` : ''} ${kubeconfig ? `kubeconfig ${kubeconfig}` : ''}`);
  const dev = await developmentEnv();
  const admin = { email: dev.ADMIN_EMAIL, password: dev.ADMIN_PASSWORD };
  if (!external || !argv.includes('--images-loaded')) {
    await phase('images', async () => {
      await requireImages();
      if (!external) await pushedAndVerified();
    });
  }
  if (!skip.has('traces')) await phase('trace receiver', traceReceiver);
  await phase('deploy', () => deploy(dev));
  await phase(edge ? 'edge (Traefik, Gateway API)' : 'gateway', gatewayReachable);
  await phase('journey', async () => {
    const record = [];
    if (!gatewayUrl) throw new Error('no gateway URL: the gateway phase found none');
    await journey(gatewayUrl, admin, { say, redact, record });
    results.push([
      'journey',
      'register, top up, book, session ended after its slot began, review, CRM totals',
      'ok',
      `${record.length} steps through ${edge ? `Traefik's Gateway (${gatewayUrl})` : 'the gateway Service'}`,
    ]);
  });
  if (!skip.has('traces')) await phase('traces', tracesArrived);
  if (!skip.has('dlq'))
    await phase('dead-letter runbook', () =>
      deadLetterRunbook({
        root,
        work: WORK,
        namespace: NAMESPACE,
        kubectl,
        kn,
        image: deployedImage('marketplace-tools', 'localhost/marketplace-tools:dev'),
        say,
        results,
      }),
    );
  if (!skip.has('netpol'))
    await phase('network policies', () =>
      networkPolicies({
        namespace: NAMESPACE,
        kubectl,
        k,
        image: deployedImage('marketplace/gateway', 'localhost/marketplace/gateway:dev'),
        say,
        results,
      }),
    );
  if (!skip.has('replicas')) await phase('two replicas under load', () => twoReplicas(admin));
  if (!skip.has('rolling')) await phase('rolling update under load', () => rollingUpdate(admin));
  if (!skip.has('kill')) await phase('pod kill under load', () => podKill(admin));
  if (!skip.has('prod')) await phase('prod overlay dry-run', prodDryRun);
  const pods = JSON.parse(await kn(['get', 'pods', '-o', 'json'])).items;
  const restarts = pods.flatMap((p) =>
    (p.status.containerStatuses ?? []).filter((c) => c.restartCount > 0).map((c) => `${p.metadata.name} ${c.restartCount}`),
  );
  results.push(['all', 'no container restarted', restarts.length === 0 ? 'ok' : 'BROKEN', restarts.join(', ') || `${pods.length} pods`]);
} catch (err) {
  failure = err;
}
const broken = results.filter((row) => row[2] !== 'ok');
if ((failure || broken.length > 0) && !interrupted) {
  if (external || existsSync(kubeconfig ?? '')) await diagnose();
  if (!external) daemonClues();
}
const clean = interrupted ? true : await cleanUp();
console.log('');
say('invariants and checks');
if (results.length) table([['scenario', 'rule', '', 'detail'], ...results]);
console.log('');
say('timings');
table([['phase', 'seconds', ''], ...timings, ['total', seconds(begun), '']]);
if (failure) say(`FAILED: ${redact(messageOf(failure))}`);
if (broken.length > 0) say(`BROKEN: ${broken.map((row) => `${row[0]}: ${row[1]}`).join('; ')}`);
if (!clean) say('the host is not as it was: see above');
process.exit(failure || broken.length > 0 || !clean ? 1 : 0);
