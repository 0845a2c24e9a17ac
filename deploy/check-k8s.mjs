#!/usr/bin/env node
// Renders the kustomize overlays and checks them offline, the way CI does (deploy/test/manifests.test.ts):
//   kubeconform -strict against the Kubernetes schemas and the operators' CRD schemas, and kube-score.
// Tools are pinned Go modules, installed with `go install` into .tools/go/<module>@<version>/ (once);
// the schemas are converted from the k8s.io/kubernetes and operator modules (Go module proxy) into
// .tools/k8s-schemas/ (once). Nothing is fetched from GitHub.
//
//   node deploy/check-k8s.mjs                      # both overlays, human summary
//   node deploy/check-k8s.mjs --json               # both overlays, one JSON document
//   node deploy/check-k8s.mjs --json --file x.yaml # a manifest file instead of the overlays
//   node deploy/check-k8s.mjs --render DIR         # kustomize build DIR (the pinned kustomize)
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { ensureGoTool, go, goEnv, run } from '../scripts/lib/go-tools.mjs';
import { writeCrdSchemas, writeKubernetesSchemas } from './k8s-schemas.mjs';
import { processFailure } from '../scripts/lib/errors.mjs';
import { ensureTool as ensureMachineTool } from '../scripts/lib/supply-chain.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// Pinned: the versions CI checks against. Change them here (and in k8s/README.md).
export const KUBERNETES_VERSION = '1.33.4';
export const TOOLS = {
  kustomize: { module: 'sigs.k8s.io/kustomize/kustomize/v5', version: 'v5.7.1' },
  kubeconform: { module: 'github.com/yannh/kubeconform/cmd/kubeconform', version: 'v0.7.0' },
  'kube-score': { module: 'github.com/zegl/kube-score/cmd/kube-score', version: 'v1.20.0' },
};
// Where the CRDs come from. MongoDB Controllers for Kubernetes (github.com/mongodb/mongodb-kubernetes) is
// not served by the Go module proxy (403); it serves the MongoDBCommunity CRD it took over from the
// community operator's last release, whose module is served: the same group, version and schema.
export const CRD_SOURCES = [
  {
    module: 'github.com/mongodb/mongodb-kubernetes-operator',
    version: 'v0.13.0',
    files: ['config/crd/bases/mongodbcommunity.mongodb.com_mongodbcommunity.yaml'],
  },
  { module: 'github.com/rabbitmq/cluster-operator/v2', version: 'v2.20.0', files: ['config/crd/bases/rabbitmq.com_rabbitmqclusters.yaml'] },
  // The services' broker users (k8s/overlays/prod/bus-users.yaml): User, Permission, TopicPermission.
  {
    module: 'github.com/rabbitmq/messaging-topology-operator',
    version: 'v1.17.4',
    files: [
      'config/crd/bases/rabbitmq.com_users.yaml',
      'config/crd/bases/rabbitmq.com_permissions.yaml',
      'config/crd/bases/rabbitmq.com_topicpermissions.yaml',
    ],
  },
  // The prod overlay's edge (k8s/components/gateway-api): Gateway API, standard channel.
  {
    module: 'sigs.k8s.io/gateway-api',
    version: 'v1.3.0',
    files: [
      'config/crd/standard/gateway.networking.k8s.io_gatewayclasses.yaml',
      'config/crd/standard/gateway.networking.k8s.io_gateways.yaml',
      'config/crd/standard/gateway.networking.k8s.io_httproutes.yaml',
      'config/crd/standard/gateway.networking.k8s.io_referencegrants.yaml',
    ],
  },
  // cert-manager's Issuer and Certificate: the data tier's TLS (k8s/components/data-tier-tls, in prod)
  // and the optional components/cert-manager.
  {
    module: 'github.com/cert-manager/cert-manager',
    version: 'v1.19.2',
    files: ['deploy/crds/cert-manager.io_certificates.yaml', 'deploy/crds/cert-manager.io_issuers.yaml'],
  },
  // The optional monitoring component (k8s/components/monitoring): PodMonitor, PrometheusRule.
  {
    module: 'github.com/prometheus-operator/prometheus-operator',
    version: 'v0.85.0',
    files: [
      'example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml',
      'example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml',
      'example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml',
    ],
  },
];
const OVERLAYS = ['dev', 'prod'];

const tools = join(root, '.tools');
const log = (message) => process.stderr.write(`check-k8s: ${message}\n`);
/** The pinned tool's binary, installed into .tools/go/<name>@<version>/ when missing. */
export const ensureTool = (name) => ensureGoTool(tools, name, TOOLS[name], log);

/** A module's source directory in the Go module cache (downloaded through the module proxy when missing). */
function moduleDir(module, version) {
  const info = JSON.parse(run(go(), ['mod', 'download', '-json', `${module}@${version}`], { env: goEnv(), cwd: tmpdir() }));
  if (info.Error) throw new Error(`go mod download ${module}@${version}: ${info.Error}`);
  return info.Dir;
}

/** Schemas for kubeconform, made once per (Kubernetes version, CRD sources, converter). */
export function ensureSchemas() {
  const converter = readFileSync(join(root, 'deploy', 'k8s-schemas.mjs'), 'utf8');
  const key = createHash('sha256').update(JSON.stringify({ KUBERNETES_VERSION, CRD_SOURCES, converter })).digest('hex').slice(0, 12);
  const dir = join(tools, 'k8s-schemas', key);
  if (existsSync(join(dir, 'done'))) return dir;
  rmSync(dir, { recursive: true, force: true });
  log(`making the Kubernetes ${KUBERNETES_VERSION} and CRD schemas in ${dir}`);
  const kubernetes = moduleDir('k8s.io/kubernetes', `v${KUBERNETES_VERSION}`);
  writeKubernetesSchemas(join(kubernetes, 'api', 'openapi-spec', 'swagger.json'), dir, KUBERNETES_VERSION);
  for (const source of CRD_SOURCES) {
    const sourceDir = moduleDir(source.module, source.version);
    writeCrdSchemas(
      source.files.map((file) => join(sourceDir, file)),
      join(dir, 'crds'),
    );
  }
  writeFileSync(join(dir, 'done'), new Date().toISOString());
  return dir;
}

export function render(overlay) {
  return run(ensureTool('kustomize'), ['build', join(root, 'k8s', 'overlays', overlay)]);
}

/** `kustomize build` of any directory (an overlay copied with other params, say). */
export function renderDir(dir) {
  return run(ensureTool('kustomize'), ['build', dir]);
}

/** kubeconform -strict, no network: every object valid against its schema, none without one. */
export function kubeconform(yaml, schemas) {
  const output = run(
    ensureTool('kubeconform'),
    [
      '-strict',
      '-verbose',
      '-output',
      'json',
      '-kubernetes-version',
      KUBERNETES_VERSION,
      '-schema-location',
      join(schemas, '{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json'),
      '-schema-location',
      join(schemas, 'crds', '{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json'),
      '-',
    ],
    { input: yaml },
  );
  return output;
}

function kubeconformResults(yaml, schemas) {
  let stdout;
  try {
    stdout = kubeconform(yaml, schemas);
  } catch (err) {
    // kubeconform exits 1 when something is invalid; its report is still on stdout.
    stdout = processFailure(err).stdout;
    if (!stdout) throw err;
  }
  const { resources } = JSON.parse(String(stdout));
  return resources.map((r) => ({
    kind: r.kind,
    name: r.name,
    status: r.status.replace(/^status/, '').toLowerCase(),
    msg: r.msg,
    errors: (r.validationErrors ?? []).map((e) => `${e.path}: ${e.msg}`),
  }));
}

const GRADES = { 1: 'CRITICAL', 5: 'WARNING', 7: 'ALMOST_OK', 10: 'OK' };

/** kube-score's CRITICAL and WARNING findings: [{object: "Kind/name", check, grade, comments}]. */
export function kubeScore(yaml) {
  let stdout;
  try {
    stdout = run(
      ensureTool('kube-score'),
      ['score', '--output-format', 'json', '--kubernetes-version', `v${KUBERNETES_VERSION.split('.').slice(0, 2).join('.')}`, '-'],
      {
        input: yaml,
      },
    );
  } catch (err) {
    const failure = processFailure(err);
    stdout = failure.stdout; // exits 1 when anything is CRITICAL
    // It could not read the objects at all: that is a finding too, never allowed.
    if (!stdout) return [{ object: '-', check: 'kube-score-failed', grade: 'CRITICAL', comments: [String(failure.stderr).trim()] }];
  }
  const findings = [];
  for (const object of JSON.parse(String(stdout))) {
    for (const check of object.checks) {
      if (check.skipped || check.grade > 5) continue;
      findings.push({
        object: `${object.type_meta.kind}/${object.object_meta.name}`,
        check: check.check.id,
        grade: GRADES[check.grade],
        comments: (check.comments ?? []).map((c) => [c.path, c.summary].filter(Boolean).join(': ')),
      });
    }
  }
  return findings;
}

/**
 * Writes each PrometheusRule of a rendered overlay as a Prometheus rules file, `<name>.rules.yaml`,
 * into a new folder; `annotations: false` leaves the annotations out (the unit tests judge the
 * expressions, durations and labels; `promtool check rules` checks the annotations' templates).
 * Answers the folder and the files.
 */
function writeRuleFiles(yaml, { annotations = true } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'rules-'));
  const files = [];
  for (const doc of parseAllDocuments(yaml)) {
    const object = doc.toJS();
    if (object?.kind !== 'PrometheusRule') continue;
    const groups = object.spec.groups.map((group) => ({
      ...group,
      rules: group.rules.map((rule) => (annotations ? rule : { ...rule, annotations: undefined })),
    }));
    const file = join(dir, `${object.metadata.name}.rules.yaml`);
    writeFileSync(file, stringify({ groups }));
    files.push(file);
  }
  return { dir, files };
}

/** promtool, built once per machine (scripts/lib/supply-chain.mjs), run on `args`: its exit status and output. */
function promtool(args, cwd) {
  try {
    return { status: 0, output: run(ensureMachineTool('promtool', log), args, { cwd }) };
  } catch (err) {
    const failure = processFailure(err);
    return { status: failure.status ?? 1, output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` || failure.message };
  }
}

/**
 * `promtool check rules` on every PrometheusRule of a rendered overlay: PromQL, durations, label
 * and annotation templates. Answers one `<rule>: <complaint>` line per problem, none when all parse.
 */
export function checkRules(yaml) {
  const { dir, files } = writeRuleFiles(yaml);
  try {
    if (files.length === 0) return [];
    const { status, output } = promtool(['check', 'rules', ...files]);
    if (status === 0) return [];
    const complaints = output
      .split('\n')
      .map((line) => line.replaceAll(`${dir}/`, '').trim())
      .filter((line) => line !== '' && !line.startsWith('Checking ') && line !== 'FAILED:' && !line.startsWith('SUCCESS'));
    return complaints.length > 0 ? [...new Set(complaints)] : [`promtool exited ${status}`];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `promtool test rules` on the unit tests in `testsDir` (`*.test.yaml`, each naming the rule
 * files `<PrometheusRule name>.rules.yaml` it loads) against the PrometheusRules of a rendered
 * overlay. Answers promtool's status and output.
 */
export function testRules(yaml, testsDir) {
  const { dir } = writeRuleFiles(yaml, { annotations: false });
  try {
    const tests = readdirSync(testsDir).filter((file) => file.endsWith('.test.yaml'));
    for (const file of tests) cpSync(join(testsDir, file), join(dir, file));
    return { tests, ...promtool(['test', 'rules', ...tests], dir) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function check(yaml) {
  const schemas = ensureSchemas();
  const objects = parseAllDocuments(yaml).filter((doc) => doc.contents !== null).length;
  return { objects, kubeconform: kubeconformResults(yaml, schemas), kubeScore: kubeScore(yaml), rules: checkRules(yaml) };
}

function main() {
  const args = process.argv.slice(2);
  // --render DIR: the kustomize build of DIR on stdout (the tests render copies of the overlays).
  const renderAt = args.indexOf('--render');
  if (renderAt >= 0) {
    process.stdout.write(renderDir(args[renderAt + 1]));
    return;
  }
  const json = args.includes('--json');
  const fileAt = args.indexOf('--file');
  // --test-rules DIR: the alert rules' unit tests of DIR against the prod overlay (or --file): promtool's answer as JSON.
  const testsAt = args.indexOf('--test-rules');
  if (testsAt >= 0) {
    const yaml = fileAt >= 0 ? readFileSync(args[fileAt + 1], 'utf8') : render('prod');
    process.stdout.write(JSON.stringify(testRules(yaml, args[testsAt + 1])));
    return;
  }
  const started = Date.now();
  const inputs =
    fileAt >= 0 ? { [args[fileAt + 1]]: readFileSync(args[fileAt + 1], 'utf8') } : Object.fromEntries(OVERLAYS.map((o) => [o, render(o)]));
  const results = Object.fromEntries(Object.entries(inputs).map(([name, yaml]) => [name, { yaml, ...check(yaml) }]));
  const tally = (r) => ({
    valid: r.kubeconform.filter((x) => x.status === 'valid').length,
    invalid: r.kubeconform.filter((x) => x.status !== 'valid').length,
    critical: r.kubeScore.filter((x) => x.grade === 'CRITICAL').length,
    warning: r.kubeScore.filter((x) => x.grade === 'WARNING').length,
  });
  if (json) {
    process.stdout.write(JSON.stringify({ kubernetesVersion: KUBERNETES_VERSION, ms: Date.now() - started, results }));
    return;
  }
  for (const [name, r] of Object.entries(results)) {
    const t = tally(r);
    console.log(
      `${name}: ${r.objects} objects; kubeconform ${t.valid} valid, ${t.invalid} not; kube-score ${t.critical} CRITICAL, ${t.warning} WARNING`,
    );
    for (const x of r.kubeconform.filter((x) => x.status !== 'valid'))
      console.log(`  kubeconform ${x.status} ${x.kind}/${x.name}: ${x.msg}`);
    for (const x of r.kubeScore) console.log(`  kube-score ${x.grade} ${x.object} ${x.check}: ${x.comments.join('; ')}`);
    for (const x of r.rules) console.log(`  promtool ${x}`);
  }
  console.log(`(${Date.now() - started} ms)`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
