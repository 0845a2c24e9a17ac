#!/usr/bin/env node
// `npm run test:affected [-- --base <ref>] [-- --list] [-- <jest arguments>]`: the jest projects a
// change affects, then the contract gates (docs/releasing.md, "Testing only what a change affects").
//
// The change: what differs between the working tree (committed or not, untracked files too) and
// its merge base with --base; by default origin/main when it exists, else the commit the last
// release tags (<name>@<version>, the highest of each name) share; with neither, everything runs.
// Each changed file selects projects (root jest.config.js: one per workspace package):
//   - a service's, e2e's or deploy's own files: that project, the projects of the workspace
//     packages that depend on it (package.json), and e2e for a service (e2e drives every service
//     through the gateway);
//   - EVERYTHING for root configuration (package.json, the lockfile, pnpm-workspace.yaml,
//     tsconfig*.json, jest.config.js, jest.preset.js, .node-version, .npmrc, .ci/, the jest global
//     set-up and scripts/run.mjs), for packages/kit, packages/contracts and packages/infra (every
//     project builds on them), and for any file no rule below names (the safe default);
//   - deploy for k8s/, docker/, docker-compose.yml, .dockerignore, release/, .changeset/config.json
//     and scripts/affected.mjs (their tests live in deploy/test/); deploy and scripts for
//     scripts/release.mjs (deploy/test/ and scripts/test/);
//   - e2e for scripts/migrate-queues.mjs; scripts and e2e for scripts/system-env.mjs and
//     scripts/lib/seed.mjs (their unit tests; the e2e system and fixtures), deploy and scripts for
//     scripts/test/lib/ (the release tests' scratch repositories); scripts (the gates' tests, scripts/test/) for
//     scripts/contracts.mjs and scripts/contract-gates/ (with deploy for scripts/lib/go-tools.mjs);
//     infra for scripts/mixed-versions.mjs (its release resolution is tested there); nothing for
//     contracts/released/ (the gates, which always run, read it);
//   - scripts for the runbooks (README.md, docs/*.md, k8s/README.md, services' READMEs: every command
//     they name is run), and scripts with e2e for the operations scripts (backup, reconcile, dlq, tools);
//   - e2e for docs/observability.md and deploy for k8s/README.md (tests read them), deploy and e2e
//     for k8s/components/monitoring/ (the metrics test reads the alerts and the dashboard);
//   - nothing for documentation (every other *.md: READMEs, CHANGELOGs, changeset notes; docs/), bench/,
//     the lint configuration, and scripts/containers.mjs, scripts/marketplace-client.mjs,
//     scripts/journey.mjs, scripts/log-clues.mjs (CI's images step and mixed-version run prove those),
//     scripts/k8s-e2e.mjs and scripts/k8s/ (CI's k8s step), scripts/generated-clients.mjs and clients/ (CI's clients step).
// Then `node scripts/run.mjs test --selectProjects <projects…>` (everything: `npm test` itself),
// and `node scripts/contracts.mjs check` when it exists. --list prints the selection and why
// (--json: as JSON) without running anything; --files a,b replaces the git diff (what the tests use).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toolEnv } from './lib/toolchain.mjs';
import { messageOf } from './lib/errors.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SERVICES = ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'];
const FOUNDATIONS = ['contracts', 'kit', 'infra'];
/** jest project (its displayName) → its folder. */
const PROJECTS = {
  ...Object.fromEntries(FOUNDATIONS.map((name) => [name, `packages/${name}`])),
  ...Object.fromEntries(SERVICES.map((name) => [name, `services/${name}`])),
  e2e: 'e2e',
  deploy: 'deploy',
  scripts: 'scripts/test',
  client: 'packages/client',
};
const RELEASED = [...SERVICES, ...FOUNDATIONS];

const EVERYTHING_FILES = [
  'package.json',
  'pnpm-lock.yaml',
  'pnpm-workspace.yaml',
  'jest.config.js',
  'jest.preset.js',
  '.node-version',
  '.npmrc',
  'scripts/run.mjs',
  'scripts/jest-global-setup.cjs',
  'scripts/jest-global-teardown.cjs',
];
const DEPLOY_FILES = ['docker-compose.yml', '.dockerignore', '.changeset/config.json', 'scripts/affected.mjs'];
const DEPLOY_FOLDERS = ['k8s/', 'docker/', 'release/'];
const UNTESTED_FILES = [
  'eslint.config.mjs',
  '.prettierrc.json',
  '.prettierignore',
  '.gitignore',
  'scripts/containers.mjs',
  'scripts/marketplace-client.mjs',
  'scripts/journey.mjs',
  'scripts/log-clues.mjs',
  'scripts/k8s-e2e.mjs',
  'scripts/generated-clients.mjs',
];
const UNTESTED_FOLDERS = ['docs/', 'bench/', 'scripts/k8s/', 'clients/'];
/** Documentation a test reads: the metrics test holds docs/observability.md to what is exported; deploy's holds k8s/README.md to the overlays. */
const READ_BY_TESTS = { 'docs/observability.md': ['e2e', 'scripts'], 'k8s/README.md': ['deploy', 'scripts'] };
/** The runbooks whose every command scripts/test/runbooks.test.ts runs (scripts/lib/runbooks.mjs). */
const isRunbook = (file) => file === 'README.md' || /^docs\/[^/]+\.md$/.test(file) || /^services\/[^/]+\/README\.md$/.test(file);
/** The operations scripts: their tests (scripts/test/) and the runs through a system (e2e: the restore drill, dead letters, queue migration). */
const OPERATIONS_FILES = [
  'scripts/backup.mjs',
  'scripts/reconcile.mjs',
  'scripts/dlq.mjs',
  'scripts/tools.mjs',
  'scripts/lib/deps.mjs',
  'scripts/lib/moto.mjs',
  'scripts/lib/runbooks.mjs',
];

const say = (line) => console.error(`[affected] ${line}`);

function git(args) {
  const result = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : null;
}

/** Workspace project → the projects whose package.json depends on it (any dependency kind). */
function dependantsGraph() {
  const nameOf = {};
  const depsOf = {};
  for (const [project, dir] of Object.entries(PROJECTS)) {
    if (!existsSync(join(root, dir, 'package.json'))) continue; // scripts/test: no package, nothing depends on it
    const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
    nameOf[pkg.name] = project;
    depsOf[project] = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies, ...pkg.peerDependencies, ...pkg.optionalDependencies });
  }
  const dependants = Object.fromEntries(Object.keys(PROJECTS).map((project) => [project, /** @type {string[]} */ ([])]));
  for (const [project, deps] of Object.entries(depsOf)) {
    for (const dep of deps) if (nameOf[dep]) dependants[nameOf[dep]].push(project);
  }
  return dependants;
}

/** The projects one changed file selects: { all: reason } or { projects: [...] } (possibly none). */
function classify(file, dependants) {
  if (EVERYTHING_FILES.includes(file) || /^tsconfig[^/]*\.json$/.test(file) || file.startsWith('.ci/'))
    return { all: 'root configuration' };
  // Files a test reads although they are documentation or deployment: the tests that read them.
  if (Object.hasOwn(READ_BY_TESTS, file)) return { projects: READ_BY_TESTS[file] };
  if (file.startsWith('k8s/components/monitoring/')) return { projects: ['deploy', 'e2e'] }; // e2e/test/metrics.test.ts
  if (isRunbook(file)) return { projects: ['scripts'] }; // every command it names must exist
  if (file.endsWith('.md')) return { projects: [] }; // no other test reads documentation
  // The tests' shared helpers (scratch git repositories): the release tests of both projects use them.
  if (file.startsWith('scripts/test/lib/')) return { projects: ['deploy', 'scripts'] };
  const project = Object.keys(PROJECTS).find((name) => file.startsWith(`${PROJECTS[name]}/`));
  if (project && FOUNDATIONS.includes(project)) return { all: `packages/${project}, which every project builds on` };
  if (project) {
    const selected = new Set([project]);
    const queue = [project];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      for (const dependant of dependants[next]) {
        if (selected.has(dependant)) continue;
        selected.add(dependant);
        queue.push(dependant);
      }
    }
    if (SERVICES.includes(project)) selected.add('e2e');
    return { projects: [...selected] };
  }
  // The release script: deploy/test/release.test.ts and scripts/test/release.test.ts.
  if (file === 'scripts/release.mjs') return { projects: ['deploy', 'scripts'] };
  if (DEPLOY_FILES.includes(file) || DEPLOY_FOLDERS.some((folder) => file.startsWith(folder))) return { projects: ['deploy'] };
  if (file === 'scripts/migrate-queues.mjs') return { projects: ['e2e', 'scripts'] };
  // The system's environment and the seeded consultation: their unit tests, and the end-to-end tests' system and fixtures.
  if (file === 'scripts/system-env.mjs' || file === 'scripts/lib/seed.mjs') return { projects: ['scripts', 'e2e'] };
  if (OPERATIONS_FILES.includes(file)) return { projects: ['scripts', 'e2e'] };
  if (file === 'scripts/contracts.mjs' || file.startsWith('scripts/contract-gates/')) return { projects: ['scripts'] };
  if (file === 'scripts/lib/go-tools.mjs') return { projects: ['scripts', 'deploy'] };
  if (file === 'scripts/mixed-versions.mjs') return { projects: ['infra'] }; // its release resolution: packages/infra/test
  // The released contracts: the gates, which always run after the tests, read them.
  if (file.startsWith('contracts/released/')) return { projects: [] };
  if (UNTESTED_FILES.includes(file) || UNTESTED_FOLDERS.some((folder) => file.startsWith(folder))) return { projects: [] };
  return { all: `${file}: no rule names it` };
}

/** The selection for a list of changed files: { all, projects, reasons: { file: [...projects] | reason } }. */
export function select(files, dependants = dependantsGraph()) {
  const reasons = {};
  const projects = new Set();
  let all = null;
  for (const file of files) {
    const verdict = classify(file, dependants);
    if (verdict.all) {
      all ??= verdict.all;
      reasons[file] = `everything (${verdict.all})`;
    } else {
      verdict.projects.forEach((project) => projects.add(project));
      reasons[file] = verdict.projects;
    }
  }
  const order = Object.keys(PROJECTS);
  return {
    all: all !== null,
    why: all,
    projects: all !== null ? order : order.filter((project) => projects.has(project)),
    reasons,
  };
}

/** The base commit: --base, else origin/main, else where the last release tags meet; null when none. */
function resolveBase(given) {
  if (given) {
    const commit = git(['rev-parse', '--verify', '-q', `${given}^{commit}`]);
    if (!commit) throw new Error(`--base ${given}: no such commit here (fetch it first: git fetch origin ${given})`);
    return { ref: given, commit };
  }
  const main = git(['rev-parse', '--verify', '-q', 'origin/main^{commit}']);
  if (main) return { ref: 'origin/main', commit: main };
  const lastTags = RELEASED.map((name) => git(['tag', '--list', `${name}@*`, '--sort=-v:refname'])?.split('\n')[0]).filter(Boolean);
  if (lastTags.length > 0) {
    const commit = git(['merge-base', '--octopus', ...lastTags]);
    if (commit) return { ref: `the last release tags (${lastTags.join(', ')})`, commit };
  }
  return null;
}

function changedFiles(base) {
  const mergeBase = git(['merge-base', base.commit, 'HEAD']);
  if (!mergeBase) throw new Error(`${base.ref} shares no history with HEAD (a shallow clone? fetch with --depth=0 or more history)`);
  const diff = git(['diff', '--name-only', '--no-renames', mergeBase]);
  const untracked = git(['ls-files', '--others', '--exclude-standard']);
  if (diff === null || untracked === null) throw new Error('git diff failed');
  return [...new Set([...diff.split('\n'), ...untracked.split('\n')].filter(Boolean))].sort();
}

function parseArgs(argv) {
  /** @type {{ base?: string, list: boolean, json: boolean, files?: string[], jest: string[] }} */
  const options = { base: undefined, list: false, json: false, files: undefined, jest: [] };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--base') options.base = argv[++i];
    else if (arg.startsWith('--base=')) options.base = arg.slice('--base='.length);
    else if (arg === '--list') options.list = true;
    else if (arg === '--json') options.json = true;
    else if (arg === '--files') options.files = (argv[++i] ?? '').split(',').filter(Boolean);
    else if (arg.startsWith('--files=')) options.files = arg.slice('--files='.length).split(',').filter(Boolean);
    else options.jest.push(arg);
  }
  return options;
}

function runStep(command, args) {
  say(`${command === process.execPath ? 'node' : command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: toolEnv() });
  return result.status ?? 1;
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  let selection;
  let base = null;
  if (options.files) selection = select(options.files);
  else {
    base = resolveBase(options.base);
    selection = base
      ? select(changedFiles(base))
      : { all: true, why: 'no base to compare with', projects: Object.keys(PROJECTS), reasons: {} };
  }
  const summary = { base: base?.ref ?? null, ...selection };
  if (options.json) console.log(JSON.stringify(summary, null, 2));
  else {
    if (base) say(`changes since ${base.ref} (${base.commit.slice(0, 7)}): ${Object.keys(selection.reasons).length} file(s)`);
    for (const [file, reason] of Object.entries(selection.reasons))
      say(`  ${file}: ${Array.isArray(reason) ? reason.join(', ') || 'no tests' : reason}`);
    say(selection.all ? `everything (${selection.why})` : `projects: ${selection.projects.join(', ') || 'none'}`);
  }
  if (options.list) return 0;

  let code = 0;
  if (selection.all) code = runStep(process.execPath, [join(root, 'scripts/run.mjs'), 'test', ...options.jest]);
  else if (selection.projects.length > 0) {
    // Jest's own arguments first: --selectProjects takes every value up to the next option.
    code = runStep(process.execPath, [join(root, 'scripts/run.mjs'), 'test', ...options.jest, '--selectProjects', ...selection.projects]);
  }
  const gates = join(root, 'scripts', 'contracts.mjs');
  if (!existsSync(gates)) say('contract gates: scripts/contracts.mjs not found, skipped');
  else {
    let built = 0;
    if (!selection.all && selection.projects.length === 0) {
      // Nothing tested, so nothing built yet: the gates read the built contracts.
      built = runStep(process.execPath, [join(root, 'scripts/run.mjs'), 'build']);
    }
    const gateCode = built || runStep(process.execPath, [gates, 'check']);
    code ||= gateCode;
  }
  return code;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main();
  } catch (err) {
    say(messageOf(err));
    process.exitCode = 1;
  }
}
