#!/usr/bin/env node
// `npm run release [-- --dry-run]`: releases what the pending changesets (.changeset/*.md) name,
// plus everything that depends on it (docs/releasing.md).
//
//   1. `changeset version`: new versions in the package.json files, CHANGELOG entries (the
//      release notes), the changeset files consumed; a bump of @mkt/contracts or @mkt/kit bumps
//      every service and package depending on it (.changeset/config.json).
//   2. `node scripts/contracts.mjs snapshot` (after `tsc -b`): contracts/released/ follows.
//   3. release/releases.json: the last release of each service and package.
//   4. k8s/overlays/{prod,dev}/kustomization.yaml: each released service's image pinned to its version.
//   5. One commit, `release: <name>@<version>, …`, and an annotated tag `<name>@<version>` for
//      each bumped name (its CHANGELOG entry as the tag's message); nothing is pushed.
//   6. The images to build: marketplace/<service>:<version>.
//
// --dry-run prints the plan (computed by the same `changeset version` in a scratch copy under
// .dev/) and changes nothing. Nothing pending, or nothing bumped: nothing is committed or tagged.
// The working tree must be clean (the release commit holds exactly what the release changed).
// Plain Node (ESM, its own modules only); needs the workspace installed (`pnpm install`).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SERVICES = ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'];
const PACKAGES = ['contracts', 'kit', 'infra'];
const RELEASED = [...SERVICES, ...PACKAGES];
const dirOf = (name) => (SERVICES.includes(name) ? `services/${name}` : `packages/${name}`);
const OVERLAYS = ['k8s/overlays/prod/kustomization.yaml', 'k8s/overlays/dev/kustomization.yaml'];
const RELEASES_FILE = 'release/releases.json';

const say = (line) => console.log(line);
class Refused extends Error {}

function run(command, args, { cwd = root, capture = false } = {}) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', stdio: capture ? ['ignore', 'pipe', 'pipe'] : ['ignore', 2, 2] });
  if (result.error) throw new Refused(`${command} ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Refused(
      `${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})${capture ? `: ${result.stderr.trim()}` : ''}`,
    );
  }
  return capture ? result.stdout : '';
}
const git = (...args) => run('git', args, { capture: true }).trim();
const bin = (name) => join(root, 'node_modules', '.bin', name);
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

/** The changeset files waiting to be released. */
function pendingChangesets(dir = root) {
  const folder = join(dir, '.changeset');
  if (!existsSync(folder)) return [];
  return readdirSync(folder).filter((file) => file.endsWith('.md') && file !== 'README.md');
}

/** The names a changeset file lists in its front matter (`'@mkt/wallet': patch` → wallet). */
function namedIn(file) {
  const front = /^---\n([\s\S]*?)\n---/.exec(readFileSync(file, 'utf8'));
  if (!front) return [];
  return [...front[1].matchAll(/^\s*['"]?@mkt\/([\w-]+)['"]?\s*:/gm)].map((match) => match[1]);
}

/** The workspace's package folders, as pnpm-workspace.yaml lists them (`dir` and `dir/*` entries). */
function workspaceDirs(dir) {
  const lines = readFileSync(join(dir, 'pnpm-workspace.yaml'), 'utf8').split('\n');
  const start = lines.findIndex((line) => line.trim() === 'packages:');
  const dirs = [];
  for (const line of lines.slice(start + 1)) {
    const entry = /^\s+-\s+['"]?([^'"\s]+)['"]?\s*$/.exec(line);
    if (!entry) break;
    if (entry[1].endsWith('/*')) {
      const parent = entry[1].slice(0, -2);
      for (const child of readdirSync(join(dir, parent), { withFileTypes: true })) {
        if (child.isDirectory() && existsSync(join(dir, parent, child.name, 'package.json'))) dirs.push(`${parent}/${child.name}`);
      }
    } else dirs.push(entry[1]);
  }
  return dirs;
}

const versionsIn = (dir) => Object.fromEntries(RELEASED.map((name) => [name, readJson(join(dir, dirOf(name), 'package.json')).version]));

/** The CHANGELOG entry of `version` (its `## version` section, without the heading). */
function changelogEntry(dir, name, version) {
  const text = readFileSync(join(dir, dirOf(name), 'CHANGELOG.md'), 'utf8');
  const start = text.indexOf(`\n## ${version}\n`);
  if (start === -1) return '';
  const body = text.slice(start + `\n## ${version}\n`.length);
  const end = body.indexOf('\n## ');
  return (end === -1 ? body : body.slice(0, end)).trim();
}

function changesetVersion(cwd) {
  if (!existsSync(bin('changeset')))
    throw new Refused('node_modules/.bin/changeset is missing: install the workspace first (pnpm install)');
  run(bin('changeset'), ['version'], { cwd, capture: true });
}

/**
 * What `changeset version` would do, from a scratch copy of what it reads (inside the repository,
 * so the changelog module resolves from its node_modules): [{ name, from, to, why, notes }].
 */
function plan() {
  const pending = pendingChangesets();
  if (pending.length === 0) return { pending, bumps: [] };
  const scratch = join(root, '.dev', `release-plan-${process.pid}`);
  rmSync(scratch, { recursive: true, force: true });
  try {
    mkdirSync(scratch, { recursive: true });
    for (const file of ['package.json', 'pnpm-workspace.yaml']) cpSync(join(root, file), join(scratch, file));
    cpSync(join(root, '.changeset'), join(scratch, '.changeset'), { recursive: true });
    for (const dir of workspaceDirs(root)) {
      mkdirSync(join(scratch, dir), { recursive: true });
      for (const file of ['package.json', 'CHANGELOG.md']) {
        if (existsSync(join(root, dir, file))) cpSync(join(root, dir, file), join(scratch, dir, file));
      }
    }
    const before = versionsIn(scratch);
    changesetVersion(scratch);
    const after = versionsIn(scratch);
    const named = new Set(pending.flatMap((file) => namedIn(join(root, '.changeset', file))));
    const bumps = RELEASED.filter((name) => before[name] !== after[name]).map((name) => ({
      name,
      from: before[name],
      to: after[name],
      why: named.has(name) ? 'a changeset' : 'depends on a bumped package',
      notes: changelogEntry(scratch, name, after[name]),
    }));
    return { pending, bumps };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const tagOf = ({ name, to }) => `${name}@${to}`;
const imageOf = ({ name, to }) => `marketplace/${name}:${to}`;

/** release/releases.json with the bumped names' new releases (their commit: the tag and the release commit locate them). */
function updatedReleases(bumps) {
  const file = join(root, RELEASES_FILE);
  const releases = existsSync(file) ? readJson(file) : {};
  for (const bump of bumps) {
    releases[bump.name] = {
      version: bump.to,
      tag: tagOf(bump),
      ...(SERVICES.includes(bump.name) ? { image: imageOf(bump) } : {}),
      commit: null,
    };
  }
  return `${JSON.stringify(releases, null, 2)}\n`;
}

/** An overlay with each bumped service's `images:` entry set to its new version. */
function updatedOverlay(path, bumps) {
  let text = readFileSync(join(root, path), 'utf8');
  for (const bump of bumps.filter(({ name }) => SERVICES.includes(name))) {
    const entry = new RegExp(`(\\{ name: marketplace/${bump.name}, newTag: ')[^']*(' \\})`, 'g');
    const found = text.match(entry)?.length ?? 0;
    if (found !== 1)
      throw new Refused(`${path}: expected one images entry "{ name: marketplace/${bump.name}, newTag: '…' }", found ${found}`);
    text = text.replace(entry, `$1${bump.to}$2`);
  }
  return text;
}

function printPlan({ pending, bumps }, dryRun) {
  say(`pending changesets: ${pending.length === 0 ? 'none' : pending.map((file) => `.changeset/${file}`).join(', ')}`);
  if (bumps.length === 0) {
    say('nothing to release: no version changes, nothing tagged');
    return;
  }
  say(dryRun ? 'would release:' : 'releasing:');
  for (const bump of bumps) say(`  ${bump.name} ${bump.from} -> ${bump.to} (${bump.why})`);
  const services = bumps.filter(({ name }) => SERVICES.includes(name));
  say(`${dryRun ? 'would write' : 'writes'} ${RELEASES_FILE}${services.length > 0 ? ` and the images in ${OVERLAYS.join(', ')}` : ''}`);
  say(`commit: release: ${bumps.map(tagOf).join(', ')}`);
  say(`tags: ${bumps.map(tagOf).join(' ')}`);
}

function printImages(bumps) {
  const services = bumps.filter(({ name }) => SERVICES.includes(name));
  if (services.length === 0) {
    say('no service released: no image to build');
    return;
  }
  say('images to build (from the release commit, e.g. a `git worktree add` of the tag) and push:');
  for (const bump of services) say(`  ${imageOf(bump)}`);
  for (const bump of services) {
    say(`  docker build -f docker/service.Dockerfile --build-arg SERVICE=${bump.name} -t ${imageOf(bump)} .`);
  }
}

function release() {
  const args = process.argv.slice(2);
  const unknown = args.filter((arg) => arg !== '--dry-run');
  if (unknown.length > 0) throw new Refused(`unknown argument ${unknown.join(' ')} (usage: node scripts/release.mjs [--dry-run])`);
  const dryRun = args.includes('--dry-run');

  if (!dryRun) {
    const dirty = git('status', '--porcelain');
    if (dirty)
      throw new Refused(`the working tree has changes: commit or stash them first (the release commit holds only the release)\n${dirty}`);
    // Tags on a branch that is later rebased away name commits nobody deploys.
    const branch = git('rev-parse', '--abbrev-ref', 'HEAD');
    if (branch !== 'main') throw new Refused(`releases are made on main (this is ${branch})`);
  }
  const planned = plan();
  printPlan(planned, dryRun);
  const { bumps } = planned;
  if (bumps.length === 0 && !dryRun && planned.pending.length > 0) {
    // Changesets that bump nothing (`changeset add --empty`): consumed, still no release.
    changesetVersion(root);
    git('add', '-A', '.changeset');
    git('commit', '-q', '-m', 'changesets: consume the empty changesets (nothing released)');
    say(`the empty changesets consumed: commit ${git('rev-parse', '--short', 'HEAD')}`);
  }
  if (bumps.length === 0) return;
  for (const tag of bumps.map(tagOf)) {
    if (git('tag', '--list', tag)) throw new Refused(`tag ${tag} exists already`);
  }
  if (!existsSync(join(root, 'scripts', 'contracts.mjs'))) {
    say('contracts snapshot: scripts/contracts.mjs not found, contracts/released/ not refreshed');
  } else {
    say(`contracts snapshot: ${dryRun ? 'would run' : 'running'} node scripts/contracts.mjs snapshot (after tsc -b)`);
  }
  if (dryRun) {
    printImages(bumps);
    say('dry run: nothing changed');
    return;
  }

  // Everything that can refuse is checked before the tree changes: the overlays' entries, the
  // build, and the contract gates (a release never snapshots contracts the gates would refuse).
  const overlays = OVERLAYS.filter((overlay) => existsSync(join(root, overlay))).map((overlay) => [
    overlay,
    updatedOverlay(overlay, bumps),
  ]);
  const snapshot = existsSync(join(root, 'scripts', 'contracts.mjs'));
  if (snapshot) {
    if (existsSync(join(root, 'tsconfig.json'))) {
      if (!existsSync(bin('tsc'))) throw new Refused('tsc is not installed (pnpm install): the snapshot would come from a stale build');
      run(bin('tsc'), ['-b']);
    }
    run(process.execPath, [join(root, 'scripts', 'contracts.mjs'), 'check']);
  }

  try {
    changesetVersion(root);
    const after = versionsIn(root);
    const differs = bumps.filter((bump) => after[bump.name] !== bump.to);
    if (differs.length > 0) throw new Refused(`changeset version gave other versions than planned: ${differs.map(tagOf).join(', ')}`);
    if (snapshot) run(process.execPath, [join(root, 'scripts', 'contracts.mjs'), 'snapshot']);
    writeFileSync(join(root, RELEASES_FILE), updatedReleases(bumps));
    for (const [overlay, text] of overlays) writeFileSync(join(root, overlay), text);
    const touched = [RELEASES_FILE, ...bumps.map(({ name }) => `${dirOf(name)}/CHANGELOG.md`)];
    if (existsSync(bin('prettier'))) run(bin('prettier'), ['--write', '--log-level=warn', ...touched]);
  } catch (err) {
    // The tree was clean when the release began: put it back as it was, nothing half-released.
    git('checkout', '--', '.');
    git('clean', '-fdq');
    throw new Refused(`${err.message}\nthe release was undone: the working tree is as it was`);
  }

  git('add', '-A');
  const subject = `release: ${bumps.map(tagOf).join(', ')}`;
  const body = bumps.map((bump) => `${bump.name} ${bump.to}\n\n${bump.notes}`).join('\n\n');
  git('commit', '-q', '--cleanup=whitespace', '-m', subject, '-m', body);
  for (const bump of bumps) git('tag', '-a', '--cleanup=whitespace', tagOf(bump), '-m', `${bump.name} ${bump.to}\n\n${bump.notes}`);
  say(`committed ${git('rev-parse', '--short', 'HEAD')} "${subject}"; tagged ${bumps.map(tagOf).join(' ')}`);
  printImages(bumps);
  say('push them: git push --follow-tags');
}

try {
  release();
} catch (err) {
  if (!(err instanceof Refused)) throw err;
  console.error(`[release] ${err.message}`);
  process.exit(1);
}
