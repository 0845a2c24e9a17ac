// The images' supply chain: a local OCI registry, and for each image pushed to it a signature,
// an SBOM and a SLSA provenance attestation made with a key pair, checked before anything deploys
// it. Used by scripts/containers.mjs (`publish`: push, sign, attest, record the digests),
// scripts/k8s-e2e.mjs (verify, then pull by digest) and scripts/supply-chain.mjs (the commands).
//
// Tools, pinned, built from the Go module proxy once per machine into a cache outside the clone
// ($MKT_REGISTRY_CACHE, default ~/.cache/mkt-registry/go/<name>@<version>/<name>):
//   registry  the CNCF distribution registry (distribution/distribution v3)
//   cosign    signatures and attestations, with a key pair (keyless needs the internet)
//   syft      the SBOM (SPDX JSON), read from the pushed image
//   promtool  Prometheus's rule checker: the alert rules' PromQL and their unit tests
//             (deploy/test/manifests.test.ts), built here with the other machine tools
// No `import.meta` here: the jest tests load this module through SWC as CommonJS.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { go, goEnv } from './go-tools.mjs';

/* global AbortSignal */

export const TOOLS = {
  registry: { module: 'github.com/distribution/distribution/v3/cmd/registry', version: 'v3.1.2' },
  cosign: { module: 'github.com/sigstore/cosign/v2/cmd/cosign', version: 'v2.6.5' },
  syft: { module: 'github.com/anchore/syft/cmd/syft', version: 'v1.57.1' },
  // Prometheus 3.x (the module's v0.3xx tags).
  promtool: { module: 'github.com/prometheus/prometheus/cmd/promtool', version: 'v0.316.0' },
};

/** Where the built tools live: outside the clone, so a fresh clone (CI) builds nothing again. */
export const toolCache = () => process.env.MKT_REGISTRY_CACHE ?? join(process.env.HOME ?? '/root', '.cache', 'mkt-registry');

export const toolPath = (name) => join(toolCache(), 'go', `${name}@${TOOLS[name].version}`, name);

/**
 * The pinned tool's binary, built when missing. Builds of one tool are serialised by a lock file
 * (flock): CI starts them in the background while another step may ask for the same tool.
 * @param {string} name
 * @param {(line: string) => void} [log]
 */
export function ensureTool(name, log = () => undefined) {
  const file = toolPath(name);
  if (existsSync(file)) return file;
  const { module, version } = TOOLS[name];
  const bin = join(toolCache(), 'go', `${name}@${version}`);
  mkdirSync(bin, { recursive: true });
  log(`building ${module}@${version} (once per machine, into ${bin})`);
  const result = spawnSync(
    'flock',
    [join(bin, '.lock'), 'sh', '-c', 'test -x "$0/$1" || nice -n 10 "$2" install "$3"', bin, name, go(), `${module}@${version}`],
    { env: { ...goEnv(), GOBIN: bin, CGO_ENABLED: '0' }, cwd: tmpdir(), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (result.status !== 0 || !existsSync(file))
    throw new Error(`go install ${module}@${version} failed (${result.status}): ${(result.stderr ?? '').slice(-3000)}`);
  return file;
}

/**
 * Runs a command; resolves `{ code, stdout, stderr }`; throws with stderr's tail unless `check` is false.
 * @param {string} file
 * @param {string[]} args
 * @param {{ env?: NodeJS.ProcessEnv, check?: boolean, input?: string, cwd?: string }} [options]
 */
export function exec(file, args, { env, check = true, input, cwd } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: env ?? process.env, cwd, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => (stdout += chunk));
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    if (input !== undefined) child.stdin?.end(input);
    child.once('error', reject);
    child.once('close', (code) => {
      const result = { code: code ?? 128, stdout: stdout.trim(), stderr: stderr.trim() };
      if (code === 0 || !check) return resolve(result);
      reject(new Error(`${file.split('/').pop()} ${args.slice(0, 4).join(' ')} exited ${code}: ${(stderr || stdout).slice(-2000)}`));
    });
  });
}

// ---- the registry
export const DEFAULT_PORT = 5055;

/** A registry answers at `address` (the distribution API's /v2/ with its version header). */
export async function registryAnswers(address) {
  try {
    const res = await fetch(`http://${address}/v2/`, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status === 200 && res.headers.get('docker-distribution-api-version') === 'registry/2.0';
  } catch {
    return false;
  }
}

/**
 * The local registry on 127.0.0.1:<port> ($MKT_REGISTRY_PORT, default 5055), its blobs in
 * `storage` (kept between runs: the digests recorded stay pullable). One already answering there
 * is used as it is (and left running); otherwise one is started and `stop()` ends it.
 */
export async function startRegistry({ storage, log, port = Number(process.env.MKT_REGISTRY_PORT ?? DEFAULT_PORT) }) {
  const address = `127.0.0.1:${port}`;
  if (await registryAnswers(address)) return { address, started: false, stop: async () => undefined };
  const registry = ensureTool('registry');
  mkdirSync(storage, { recursive: true });
  const config = join(storage, '..', 'registry-config.yml');
  writeFileSync(
    config,
    [
      'version: 0.1',
      'log: { level: error, formatter: text, accesslog: { disabled: true } }',
      'storage:',
      `  filesystem: { rootdirectory: ${JSON.stringify(storage)} }`,
      '  delete: { enabled: true }',
      `http: { addr: "${address}" }`,
      '',
    ].join('\n'),
  );
  const out = createWriteStream(log, { flags: 'a' });
  const child = spawn(registry, ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 20_000;
  while (!(await registryAnswers(address))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the registry did not answer on ${address} (log: ${log})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    address,
    started: true,
    stop: async () => {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

// ---- signing keys
/**
 * The cosign key pair in `dir` (cosign.key, cosign.pub, and the private key's password in
 * `password`, mode 0600), made when missing. $COSIGN_KEY/$COSIGN_PUBLIC_KEY/$COSIGN_PASSWORD name a
 * release key instead. The password never reaches a command line or the output.
 */
export async function signingKeys(dir) {
  if (process.env.COSIGN_KEY) {
    return { key: process.env.COSIGN_KEY, pub: process.env.COSIGN_PUBLIC_KEY, password: process.env.COSIGN_PASSWORD ?? '' };
  }
  const key = join(dir, 'cosign.key');
  const pub = join(dir, 'cosign.pub');
  const passwordFile = join(dir, 'password');
  if (!existsSync(key) || !existsSync(pub) || !existsSync(passwordFile)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const password = randomBytes(24).toString('base64url');
    writeFileSync(passwordFile, password, { mode: 0o600 });
    await exec(ensureTool('cosign'), ['generate-key-pair'], { cwd: dir, env: { ...process.env, COSIGN_PASSWORD: password } });
    chmodSync(key, 0o600);
  }
  return { key, pub, password: readFileSync(passwordFile, 'utf8') };
}

// ---- cosign against a plain-HTTP registry on this machine, with no transparency log (offline)
const cosignEnv = (password) => ({ ...process.env, COSIGN_PASSWORD: password ?? '', COSIGN_YES: 'true', SIGSTORE_NO_CACHE: 'true' });
const REGISTRY_FLAGS = ['--allow-insecure-registry', '--allow-http-registry'];

export const PREDICATE_TYPES = {
  sbom: { cosign: 'spdxjson', uri: 'https://spdx.dev/Document' },
  provenance: { cosign: 'slsaprovenance1', uri: 'https://slsa.dev/provenance/v1' },
};

/** Signs `ref` (name@digest) and attaches the SBOM and provenance predicates as signed attestations. */
export async function signAndAttest(ref, keys, { sbomFile, provenanceFile }) {
  const cosign = ensureTool('cosign');
  const env = cosignEnv(keys.password);
  await exec(cosign, ['sign', '--key', keys.key, '--tlog-upload=false', ...REGISTRY_FLAGS, ref], { env });
  for (const [kind, file] of [
    ['sbom', sbomFile],
    ['provenance', provenanceFile],
  ])
    await exec(
      cosign,
      [
        'attest',
        '--key',
        keys.key,
        '--tlog-upload=false',
        ...REGISTRY_FLAGS,
        '--type',
        PREDICATE_TYPES[kind].cosign,
        '--predicate',
        file,
        ref,
      ],
      { env },
    );
}

/**
 * The gate: `ref`'s signature and both attestations verify with the public key, for the digest
 * `ref` resolves to now. Resolves `{ ok, reason }`: an unsigned image, or one changed after it was
 * signed (its tag moved to other content), is refused.
 */
export async function verifyImage(ref, pub) {
  const cosign = ensureTool('cosign');
  const common = ['--key', pub, '--insecure-ignore-tlog=true', ...REGISTRY_FLAGS];
  const signature = await exec(cosign, ['verify', ...common, '--output', 'json', ref], { check: false });
  if (signature.code !== 0) return { ok: false, reason: `signature: ${lastLine(signature.stderr)}` };
  for (const kind of ['sbom', 'provenance']) {
    const attestation = await exec(cosign, ['verify-attestation', ...common, '--type', PREDICATE_TYPES[kind].cosign, ref], {
      check: false,
    });
    if (attestation.code !== 0) return { ok: false, reason: `${kind} attestation: ${lastLine(attestation.stderr)}` };
  }
  return { ok: true, reason: 'signature, SBOM and provenance attestations verified' };
}

const lastLine = (text) =>
  text
    .split('\n')
    .filter((line) => line.trim() && !/^WARNING|^\s*$/.test(line))
    .slice(-1)[0]
    ?.slice(0, 300) ?? 'failed';

// ---- SBOM and provenance
/** The SPDX SBOM of a pushed image, read by syft from the registry. */
export async function sbomOf(ref, file) {
  const syft = ensureTool('syft');
  await exec(syft, ['scan', `registry:${ref}`, '-o', `spdx-json=${file}`, '-q'], {
    env: { ...process.env, SYFT_REGISTRY_INSECURE_USE_HTTP: 'true', SYFT_CHECK_FOR_APP_UPDATE: 'false' },
  });
  return file;
}

/**
 * The SLSA v1 provenance predicate of one image: what was built (the source at its commit), how
 * (the build command, the Dockerfile, its build arguments), by what builder, when.
 */
export function provenancePredicate({ source, revision, command, dockerfile, buildArgs, builder, startedOn, finishedOn, invocationId }) {
  return {
    buildDefinition: {
      buildType: 'https://github.com/marketplace/build/podman-image@v1',
      externalParameters: { command, dockerfile, buildArgs },
      internalParameters: { builder: 'podman build --format docker --layers' },
      resolvedDependencies: [{ uri: `git+${source}`, digest: { gitCommit: revision } }],
    },
    runDetails: {
      builder: { id: builder },
      metadata: { invocationId, startedOn, finishedOn },
    },
  };
}

/** The in-toto statement cosign wraps a predicate in (for a reader of release/images.json). */
export const statement = (name, digest, predicateType, predicate) => ({
  _type: 'https://in-toto.io/Statement/v1',
  subject: [{ name, digest: { sha256: digest.replace(/^sha256:/, '') } }],
  predicateType,
  predicate,
});

// ---- the record of what was pushed, and overlays by digest
/** `release/images.json`'s shape: `{ registry, revision, created, images: { <name>: { repository, tag, digest } } }`. */
export const readRecord = (file) => JSON.parse(readFileSync(file, 'utf8'));

/**
 * Kustomize `images:` entries naming each image by registry and digest: `names` maps the image
 * name the manifests use to its repository in the record.
 */
export function kustomizeImages(record, names) {
  return Object.entries(names).map(([from, repository]) => {
    const image = record.images[repository];
    if (!image) throw new Error(`${repository}: not in the record of pushed images (npm run images pushes it)`);
    if (!/^sha256:[0-9a-f]{64}$/.test(image.digest)) throw new Error(`${repository}: no digest recorded`);
    return { name: from, newName: `${record.registry}/${image.repository}`, digest: image.digest };
  });
}

/** The YAML lines of an `images:` list (flow mappings, one image a line). */
export const imagesYaml = (entries) => [
  'images:',
  ...entries.map((e) => `  - { name: ${e.name}, newName: ${e.newName}, digest: '${e.digest}' }`),
];
