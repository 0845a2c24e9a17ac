#!/usr/bin/env node
// `npm run release`: the release of what the pending changesets (.changeset/*.md) name, in two
// steps, as changesets/action and release-please do it (docs/releasing.md):
//
//   npm run release [-- --only wallet,review] [--dry-run]   the proposal: one commit `release: …`
//   npm run release -- --tag [--dry-run]                    once it is merged: its tags
//   npm run release -- --publish [--only wallet] [--dry-run] once tagged: its images, by digest
//
// The proposal (clean working tree; any branch, usually one of its own merged by review):
//   1. `changeset version` on the selected changesets: new versions in the package.json files,
//      CHANGELOG entries (the release notes), those changeset files consumed. A package is bumped
//      only when a selected changeset names it: the bumps changesets would add to the dependants
//      of a bumped package (`workspace:*` ranges are exact for it) are put back.
//   2. `node scripts/contracts.mjs snapshot` (after `tsc -b`): contracts/released/ follows.
//   3. release/releases.json: the last release of each service and package.
//   4. k8s/overlays/{prod,dev}/kustomization.yaml: each released service's image pinned to its version.
//   5. One commit, `release: <name>@<version>, …`, the CHANGELOG entries in its body. No tag yet.
// --only <names>: only the changesets whose every package is selected; one naming a selected and
// an unselected package is refused (split it, or select both); the others stay pending.
//
// --tag: an annotated tag `<name>@<version>` (its CHANGELOG entry as the message) for each name of
// every release commit reachable from HEAD that is not tagged yet; a tag that exists on another
// commit is refused. Nothing is pushed.
//
// --publish: for each service whose release (release/releases.json) is tagged, reachable from HEAD
// and has no digest recorded yet (with --only, those named): its image built from the tag (a
// temporary `git worktree add` of it; `node scripts/containers.mjs build publish --only <service>
// --source <worktree>`: pushed to the local registry, SBOM and provenance attested, signed and
// verified as `npm run images` does), verified again (`node scripts/supply-chain.mjs verify`),
// then its digest and the registry it was pushed to written in release/releases.json and its
// digest in the prod overlay's `images:` (`{ name, newTag, digest }`: the registry stays params.yaml's,
// or `supply-chain.mjs pin`'s at deploy time; the dev overlay keeps the tag alone, its images are
// built and loaded on the machine), one commit `release: images <name>@<version> sha256:…`
// per image. Clean working tree; no tag is made or moved; a failed build changes nothing: a
// failed commit puts the files it wrote back as they were, and SIGINT/SIGTERM during the build
// removes the tag's worktree and its scratch directory, then exits 128 + the signal's number.
// ($MKT_RELEASE_IMAGE_BUILDER names a module whose default export replaces the build: the tests.)
//
// --dry-run prints the plan (computed by the same `changeset version` in a scratch copy under
// .dev/), the tags or the images to publish, and changes nothing. Nothing pending, or nothing
// bumped (nothing to publish): nothing is committed.
// Plain Node (ESM, its own modules only); needs the workspace installed (`pnpm install`).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { constants as osConstants, tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { releaseTagsOf } from './lib/release-subject.mjs';
import { messageOf } from './lib/errors.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SERVICES = ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'];
const PACKAGES = ['contracts', 'kit', 'infra', 'client'];
const RELEASED = [...SERVICES, ...PACKAGES];
const dirOf = (name) => (SERVICES.includes(name) ? `services/${name}` : `packages/${name}`);
const OVERLAYS = ['k8s/overlays/prod/kustomization.yaml', 'k8s/overlays/dev/kustomization.yaml'];
/** The overlays whose images are pinned by digest: prod's. Dev's images are built and loaded on its machine, by tag. */
const DIGEST_OVERLAYS = ['k8s/overlays/prod/kustomization.yaml'];
const RELEASES_FILE = 'release/releases.json';

const say = (line) => console.log(line);
class Refused extends Error {}

// The tools' `#!/usr/bin/env node` finds the Node.js this runs on (the project's, under npm run).
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };

function run(command, args, { cwd = root, capture = false } = {}) {
  /** @type {import('node:child_process').StdioOptions} */
  const stdio = capture ? ['ignore', 'pipe', 'pipe'] : ['ignore', 2, 2];
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', stdio });
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
const readOrNull = (file) => (existsSync(file) ? readFileSync(file, 'utf8') : null);

/** The changeset files waiting to be released. */
function pendingChangesets(dir = root) {
  const folder = join(dir, '.changeset');
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((file) => file.endsWith('.md') && file !== 'README.md')
    .sort();
}

/** The names a changeset file lists in its front matter (`'@mkt/wallet': patch` → wallet). */
function namedIn(file) {
  const front = /^---\r?\n([\s\S]*?)\r?\n?---/.exec(readFileSync(file, 'utf8'));
  if (!front) return [];
  return [...front[1].matchAll(/^\s*['"]?@mkt\/([\w-]+)['"]?\s*:/gm)].map((match) => match[1]);
}

/**
 * The changesets this release takes: all pending ones, or with `only` those whose every named
 * package is selected. `{ pending, selected, held, named }` (`named`: what the selected name).
 */
function selection(only) {
  const pending = pendingChangesets();
  const names = Object.fromEntries(pending.map((file) => [file, namedIn(join(root, '.changeset', file))]));
  let selected = pending;
  if (only) {
    const partial = pending.filter((file) => names[file].some((n) => only.has(n)) && !names[file].every((n) => only.has(n)));
    if (partial.length > 0) {
      throw new Refused(
        `--only ${[...only].join(',')}: these changesets also name packages not selected (a changeset is released whole): ` +
          partial.map((file) => `.changeset/${file} (${names[file].join(', ')})`).join('; ') +
          '\nselect every package they name, or split them',
      );
    }
    // A changeset naming nothing (`changeset add --empty`) waits for a release of everything.
    selected = pending.filter((file) => names[file].length > 0 && names[file].every((n) => only.has(n)));
  }
  const held = pending.filter((file) => !selected.includes(file));
  const named = new Set(selected.flatMap((file) => names[file]));
  return { pending, selected, held, named, names };
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
const shortName = (pkgName) => (pkgName.startsWith('@mkt/') ? pkgName.slice('@mkt/'.length) : pkgName);

/** The CHANGELOG entry of `version` (its `## version` section, without the heading) in `text`. */
function changelogEntry(text, version) {
  const start = (text ?? '').indexOf(`\n## ${version}\n`);
  if (start === -1) return '';
  const body = text.slice(start + `\n## ${version}\n`.length);
  const end = body.indexOf('\n## ');
  return (end === -1 ? body : body.slice(0, end)).trim();
}

/**
 * `changeset version` in `dir` on the `selected` changesets only, then no cascade: a workspace
 * package no selected changeset names gets its package.json and CHANGELOG.md back as they were.
 * Returns the names whose bump was put back.
 */
function versionSelected(dir, { held, named }) {
  if (!existsSync(bin('changeset')))
    throw new Refused('node_modules/.bin/changeset is missing: install the workspace first (pnpm install)');
  const before = new Map();
  for (const pkgDir of workspaceDirs(dir)) {
    for (const file of ['package.json', 'CHANGELOG.md']) before.set(join(pkgDir, file), readOrNull(join(dir, pkgDir, file)));
  }
  const aside = join(dir, '.dev', `release-held-${process.pid}`);
  mkdirSync(aside, { recursive: true });
  for (const file of held) renameSync(join(dir, '.changeset', file), join(aside, file));
  try {
    run(bin('changeset'), ['version'], { cwd: dir, capture: true });
  } finally {
    for (const file of held) renameSync(join(aside, file), join(dir, '.changeset', file));
    rmSync(aside, { recursive: true, force: true });
  }
  const putBack = [];
  for (const pkgDir of workspaceDirs(dir)) {
    const pkg = readJson(join(dir, pkgDir, 'package.json')).name;
    if (named.has(shortName(pkg))) continue;
    let changed = false;
    for (const file of ['package.json', 'CHANGELOG.md']) {
      const was = before.get(join(pkgDir, file));
      const now = readOrNull(join(dir, pkgDir, file));
      if (was === now) continue;
      changed = true;
      if (was === null) rmSync(join(dir, pkgDir, file));
      else writeFileSync(join(dir, pkgDir, file), was);
    }
    if (changed) putBack.push(shortName(pkg));
  }
  return putBack.sort((a, b) => RELEASED.indexOf(a) - RELEASED.indexOf(b));
}

/**
 * What the proposal would do, from a scratch copy of what `changeset version` reads (inside the
 * repository, so the changelog module resolves from its node_modules):
 * `{ ...selection, bumps: [{ name, from, to, why, notes }], notCascaded }`.
 */
function plan(only) {
  const chosen = selection(only);
  if (chosen.selected.length === 0) return { ...chosen, bumps: [], notCascaded: [] };
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
    const notCascaded = versionSelected(scratch, chosen);
    const after = versionsIn(scratch);
    const bumps = RELEASED.filter((name) => before[name] !== after[name]).map((name) => ({
      name,
      from: before[name],
      to: after[name],
      why: chosen.selected.filter((file) => chosen.names[file].includes(name)).map((file) => `.changeset/${file}`),
      notes: changelogEntry(readOrNull(join(scratch, dirOf(name), 'CHANGELOG.md')), after[name]),
    }));
    return { ...chosen, bumps, notCascaded };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const tagOf = ({ name, to }) => `${name}@${to}`;
const imageOf = ({ name, to }) => `marketplace/${name}:${to}`;

/** release/releases.json with the bumped names' new releases (the tag and the release commit locate them). */
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

/** A service's `images:` entry in an overlay: `{ name, newTag }`, with the image's `digest` once published. */
const overlayEntry = (name) => new RegExp(`\\{ name: marketplace/${name}, newTag: '([^']*)'(?:, digest: '([^']*)')? \\}`, 'g');

/** An overlay with each bumped service's `images:` entry set to its new version. */
function updatedOverlay(path, bumps) {
  let text = readFileSync(join(root, path), 'utf8');
  for (const bump of bumps.filter(({ name }) => SERVICES.includes(name))) {
    // A new release names its tag; the digest of the previous one's image goes (--publish writes the new one's).
    const entry = overlayEntry(bump.name);
    const found = text.match(entry)?.length ?? 0;
    if (found !== 1)
      throw new Refused(`${path}: expected one images entry "{ name: marketplace/${bump.name}, newTag: '…' }", found ${found}`);
    text = text.replace(entry, `{ name: marketplace/${bump.name}, newTag: '${bump.to}' }`);
  }
  return text;
}

function printPlan({ pending, selected, held, bumps, notCascaded }, only, dryRun) {
  say(`pending changesets: ${pending.length}${only ? `; --only ${[...only].join(',')} selects ${selected.length}` : ''}`);
  if (only && held.length > 0) say(`  left pending (not selected): ${held.map((file) => `.changeset/${file}`).join(', ')}`);
  if (bumps.length === 0) {
    say('nothing to release: no version changes, nothing committed');
    return;
  }
  say(dryRun ? 'would release:' : 'releasing:');
  for (const bump of bumps)
    say(
      `  ${bump.name} ${bump.from} -> ${bump.to} (${bump.why.length} changeset${bump.why.length === 1 ? '' : 's'}: ${bump.why.join(', ')})`,
    );
  if (notCascaded.length > 0) say(`not bumped (depend on a bumped package, named by no selected changeset): ${notCascaded.join(', ')}`);
  const services = bumps.filter(({ name }) => SERVICES.includes(name));
  say(`${dryRun ? 'would write' : 'writes'} ${RELEASES_FILE}${services.length > 0 ? ` and the images in ${OVERLAYS.join(', ')}` : ''}`);
  say(`commit: release: ${bumps.map(tagOf).join(', ')}`);
  say(`then, once merged: npm run release -- --tag (${bumps.map(tagOf).join(' ')})`);
}

function printImages(bumps) {
  const services = bumps.filter(({ name }) => SERVICES.includes(name));
  if (services.length === 0) {
    say('no service released: no image to build');
    return;
  }
  say('images to publish from their tags, once tagged (npm run release -- --publish):');
  for (const bump of services) say(`  ${imageOf(bump)}`);
}

function refuseDirty() {
  const dirty = git('status', '--porcelain');
  if (dirty)
    throw new Refused(`the working tree has changes: commit or stash them first (the release commit holds only the release)\n${dirty}`);
}

function propose({ only, dryRun }) {
  if (!dryRun) refuseDirty();
  const planned = plan(only);
  printPlan(planned, only, dryRun);
  const { bumps } = planned;
  if (bumps.length === 0 && !dryRun && !only && planned.selected.length > 0) {
    // Changesets that bump nothing (`changeset add --empty`): consumed, still no release.
    versionSelected(root, planned);
    git('add', '-A', '.changeset');
    git('commit', '-q', '-m', 'changesets: consume the empty changesets (nothing released)');
    say(`the empty changesets consumed: commit ${git('rev-parse', '--short', 'HEAD')}`);
  }
  if (bumps.length === 0) return;
  for (const tag of bumps.map(tagOf)) {
    if (git('tag', '--list', tag)) throw new Refused(`tag ${tag} exists already`);
  }
  const snapshot = existsSync(join(root, 'scripts', 'contracts.mjs'));
  say(
    snapshot
      ? `contracts snapshot: ${dryRun ? 'would run' : 'running'} node scripts/contracts.mjs snapshot (after tsc -b)`
      : 'contracts snapshot: scripts/contracts.mjs not found, contracts/released/ not refreshed',
  );
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
  if (snapshot) {
    if (existsSync(join(root, 'tsconfig.json'))) {
      if (!existsSync(bin('tsc'))) throw new Refused('tsc is not installed (pnpm install): the snapshot would come from a stale build');
      run(bin('tsc'), ['-b']);
    }
    run(process.execPath, [join(root, 'scripts', 'contracts.mjs'), 'check']);
  }

  try {
    versionSelected(root, planned);
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
    throw new Refused(`${messageOf(err)}\nthe release was undone: the working tree is as it was`);
  }

  git('add', '-A');
  const subject = `release: ${bumps.map(tagOf).join(', ')}`;
  const body = bumps.map(
    (bump) => `${bump.name} ${bump.to}\n\n${changelogEntry(readOrNull(join(root, dirOf(bump.name), 'CHANGELOG.md')), bump.to)}`,
  );
  git('commit', '-q', '--cleanup=whitespace', '-m', subject, '-m', body.join('\n\n'));
  say(`committed ${git('rev-parse', '--short', 'HEAD')} "${subject}"`);
  printImages(bumps);
  say('next: review and merge it (a merge commit or a fast-forward keeps it; a squash makes a new commit of the same subject), then');
  say('  npm run release -- --tag');
}

/** The release commits reachable from HEAD, newest first: `[{ commit, releases: [{ name, to }] }]`. */
function releaseCommits() {
  const out = git('log', 'HEAD', '-E', '--grep=^release: ', '--format=%H%x09%s');
  const found = [];
  for (const line of out.split('\n').filter(Boolean)) {
    const [commit, subject] = line.split('\t');
    const tags = releaseTagsOf(subject);
    if (!tags) continue;
    const releases = tags.map((tag) => ({ name: tag.slice(0, tag.lastIndexOf('@')), to: tag.slice(tag.lastIndexOf('@') + 1) }));
    found.push({ commit, releases });
  }
  return found;
}

const showFile = (commit, path) => {
  const result = spawnSync('git', ['show', `${commit}:${path}`], { cwd: root, encoding: 'utf8' });
  return result.status === 0 ? result.stdout : null;
};

function tagReleases({ dryRun }) {
  const todo = [];
  // Oldest release commit first; each commit's names in its subject's order.
  for (const { commit, releases } of releaseCommits().reverse()) {
    for (const release of releases) {
      const tag = tagOf(release);
      const existing = spawnSync('git', ['rev-parse', '--verify', '--quiet', `refs/tags/${tag}^{commit}`], { cwd: root, encoding: 'utf8' });
      if (existing.status === 0) {
        if (existing.stdout.trim() !== commit) {
          throw new Refused(
            `tag ${tag} names ${existing.stdout.trim().slice(0, 7)}, not the release commit ${commit.slice(0, 7)}: look before you move it`,
          );
        }
        continue;
      }
      if (!RELEASED.includes(release.name))
        throw new Refused(`release commit ${commit.slice(0, 7)} names ${tag}: ${release.name} is not a released package`);
      const pkg = showFile(commit, `${dirOf(release.name)}/package.json`);
      const version = pkg ? JSON.parse(pkg).version : null;
      if (version !== release.to) {
        throw new Refused(`release commit ${commit.slice(0, 7)} names ${tag} but ${dirOf(release.name)}/package.json is ${version} there`);
      }
      const notes = changelogEntry(showFile(commit, `${dirOf(release.name)}/CHANGELOG.md`), release.to);
      todo.push({ tag, commit, message: `${release.name} ${release.to}\n\n${notes}` });
    }
  }
  if (todo.length === 0) {
    say('every release commit reachable from HEAD is tagged: nothing to tag');
    return;
  }
  const branch = git('rev-parse', '--abbrev-ref', 'HEAD');
  for (const { tag, commit, message } of todo) {
    if (!dryRun) git('tag', '-a', '--cleanup=whitespace', tag, '-m', message, commit);
    say(`${dryRun ? 'would tag' : 'tagged'} ${tag} -> ${commit.slice(0, 7)}`);
  }
  if (branch !== 'main') {
    say(`note: tagged on ${branch}, not main: merge it without a rebase or a squash, or the tags name commits main does not have`);
  }
  const services = todo.filter(({ tag }) => SERVICES.includes(tag.slice(0, tag.lastIndexOf('@'))));
  if (services.length > 0) {
    say('images to publish, each built from its tag: npm run release -- --publish');
    for (const { tag } of services) say(`  marketplace/${tag.replace('@', ':')}`);
  }
  if (!dryRun) say('push them: git push origin <tag>… (or git push --follow-tags)');
}

// ---- --publish: each release's image, built from its tag, by digest
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const tagCommit = (tag) => {
  const found = spawnSync('git', ['rev-parse', '--verify', '--quiet', `refs/tags/${tag}^{commit}`], { cwd: root, encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
};
const reachable = (commit) => spawnSync('git', ['merge-base', '--is-ancestor', commit, 'HEAD'], { cwd: root }).status === 0;

/**
 * The images to publish: each service's release in release/releases.json (with `only`, the named
 * ones) that is tagged, reachable from HEAD and has no digest yet. `{ todo: [{ name, version, tag,
 * commit, repository }], skipped: [line] }`.
 */
function publishPlan(only) {
  const releases = existsSync(join(root, RELEASES_FILE)) ? readJson(join(root, RELEASES_FILE)) : {};
  const todo = [];
  const skipped = [];
  for (const name of SERVICES.filter((service) => !only || only.has(service))) {
    const release = releases[name];
    if (!release?.tag) skipped.push(`${name}: no release in ${RELEASES_FILE}`);
    else if (release.digest) skipped.push(`${name}: ${release.tag} published (${release.digest})`);
    else {
      const commit = tagCommit(release.tag);
      if (!commit) skipped.push(`${name}: ${release.tag} is not tagged yet (npm run release -- --tag, once the proposal is merged)`);
      else if (!reachable(commit)) skipped.push(`${name}: ${release.tag} is not reachable from HEAD`);
      else todo.push({ name, version: release.version, tag: release.tag, commit, repository: `marketplace/${name}` });
    }
  }
  return { todo, skipped };
}

/** The build's running processes (buildFromTag): a signal stops them before the clean-up. */
/** @type {Set<import('node:child_process').ChildProcess>} */
const buildProcesses = new Set();

/**
 * The build of one image from its tag's worktree, as `npm run images` publishes (this checkout's
 * registry, keys and release/images.json), then the deploy gate on it. `{ registry, digest, revision }`.
 */
async function buildFromTag({ name, repository, worktree, commit }) {
  const env = { CONTAINERS_NICE: process.env.CONTAINERS_NICE ?? '10' };
  // Not spawnSync: a signal's handler (publishImages) runs at once, and stops the build's process.
  const node = (args) =>
    new Promise((done, failed) => {
      const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 2, 2] });
      buildProcesses.add(child);
      child.on('error', (err) => failed(new Refused(`node ${args.join(' ')}: ${err.message}`)));
      child.on('exit', (code, signal) => {
        buildProcesses.delete(child);
        if (code === 0) done(undefined);
        else failed(new Refused(`node ${args.join(' ')} failed (exit ${code ?? signal})`));
      });
    });
  await node([join(root, 'scripts/containers.mjs'), 'build', 'publish', '--only', name, '--source', worktree]);
  const record = readJson(join(root, 'release', 'images.json'));
  const image = record.images?.[repository];
  if (!image || image.revision !== commit)
    throw new Refused(`release/images.json has no ${repository} built from ${commit.slice(0, 7)} after the build`);
  await node([join(root, 'scripts/supply-chain.mjs'), 'verify', repository]);
  return { registry: record.registry, digest: image.digest, revision: image.revision };
}

/** The build step: $MKT_RELEASE_IMAGE_BUILDER's default export (the tests), else buildFromTag. */
async function imageBuilder() {
  const module = process.env.MKT_RELEASE_IMAGE_BUILDER;
  if (!module) return buildFromTag;
  return (await import(pathToFileURL(resolve(module)).href)).default;
}

/** release/releases.json with `name`'s image digest and the registry it was pushed to. */
function releasesWithDigest(name, { digest, registry }) {
  const releases = readJson(join(root, RELEASES_FILE));
  const { version, tag, image, commit } = releases[name];
  releases[name] = { version, tag, image, digest, registry, commit };
  return `${JSON.stringify(releases, null, 2)}\n`;
}

/** An overlay whose `name` entry (at `version`) carries `digest`. */
function overlayWithDigest(path, { name, version }, digest) {
  const text = readFileSync(join(root, path), 'utf8');
  const found = [...text.matchAll(overlayEntry(name))];
  if (found.length !== 1 || found[0][1] !== version) {
    throw new Refused(
      `${path}: expected one images entry "{ name: marketplace/${name}, newTag: '${version}' }", found ${found.map((m) => m[0]).join(', ') || 'none'}`,
    );
  }
  return text.replace(overlayEntry(name), `{ name: marketplace/${name}, newTag: '${version}', digest: '${digest}' }`);
}

async function publishImages({ only, dryRun }) {
  if (!dryRun) refuseDirty();
  const { todo, skipped } = publishPlan(only);
  for (const line of skipped) say(`  ${line}`);
  if (todo.length === 0) {
    say('nothing to publish: every tagged release reachable from HEAD has its digest; nothing committed');
    return;
  }
  say(dryRun ? 'would publish:' : 'publishing:');
  for (const item of todo) say(`  ${item.repository}:${item.version} from ${item.tag} (${item.commit.slice(0, 7)})`);
  if (dryRun) {
    say(
      `each: git worktree add of the tag; node scripts/containers.mjs build publish --only <name> --source <worktree>; ` +
        `node scripts/supply-chain.mjs verify; then the digest in ${RELEASES_FILE}, ${DIGEST_OVERLAYS.join(', ')}`,
    );
    say(`commits: ${todo.map((item) => `release: images ${item.tag} sha256:…`).join('; ')}`);
    say('dry run: nothing changed');
    return;
  }
  const build = await imageBuilder();
  // What an interruption must undo: the build's worktree and scratch directory, and files written
  // but not committed yet. SIGINT/SIGTERM undo it, then exit 128 + the signal's number.
  /** @type {{ worktree: string, scratch: string } | null} */
  let building = null;
  /** @type {string[]} */
  let written = [];
  const removeBuild = () => {
    if (!building) return;
    spawnSync('git', ['worktree', 'remove', '--force', building.worktree], { cwd: root, stdio: 'ignore' });
    rmSync(building.scratch, { recursive: true, force: true });
    spawnSync('git', ['worktree', 'prune'], { cwd: root, stdio: 'ignore' });
    building = null;
  };
  /** The written files as HEAD has them (index and working tree); true when they are. */
  const restoreWritten = () => {
    if (written.length === 0) return true;
    const restored = spawnSync('git', ['checkout', 'HEAD', '--', ...written], { cwd: root, stdio: 'ignore' }).status === 0;
    written = [];
    return restored;
  };
  /** @param {NodeJS.Signals} signal */
  const onSignal = (signal) => {
    for (const child of buildProcesses) child.kill(signal);
    removeBuild();
    restoreWritten();
    console.error(`release --publish: ${signal}; the build's worktree and scratch directory removed, nothing committed by this image`);
    process.exit(128 + (osConstants.signals[signal] ?? 0));
  };
  const signals = /** @type {const} */ (['SIGINT', 'SIGTERM']);
  for (const signal of signals) process.on(signal, onSignal);
  try {
    for (const item of todo) await publishOne(item);
  } finally {
    for (const signal of signals) process.off(signal, onSignal);
  }

  /** @param {{ name: string, version: string, tag: string, commit: string, repository: string }} item */
  async function publishOne(item) {
    // Every file is computed before any is written: a refusal leaves the tree as it was.
    const overlays = DIGEST_OVERLAYS.filter((overlay) => existsSync(join(root, overlay)));
    for (const overlay of overlays) overlayWithDigest(overlay, item, `sha256:${'0'.repeat(64)}`);
    const scratch = mkdtempSync(join(tmpdir(), `mkt-publish-${item.name}-`));
    const worktree = join(scratch, item.tag.replace('@', '-'));
    building = { worktree, scratch };
    let built;
    try {
      git('worktree', 'add', '--detach', '--quiet', worktree, item.commit);
      say(`${item.tag}: building ${item.repository}:${item.version} in ${worktree}`);
      built = await build({ ...item, worktree, root });
    } catch (err) {
      throw new Refused(`${item.tag}: the image was not published: ${messageOf(err)}\nnothing changed`);
    } finally {
      removeBuild();
    }
    if (!DIGEST.test(built?.digest ?? '') || !built?.registry || (built.revision && built.revision !== item.commit)) {
      throw new Refused(
        `${item.tag}: the build gave ${JSON.stringify(built)}, not a digest built from ${item.commit.slice(0, 7)}; nothing changed`,
      );
    }
    const files = [
      [RELEASES_FILE, releasesWithDigest(item.name, built)],
      ...overlays.map((overlay) => [overlay, overlayWithDigest(overlay, item, built.digest)]),
    ];
    const subject = `release: images ${item.tag} ${built.digest}`;
    written = files.map(([file]) => file);
    try {
      for (const [file, text] of files) writeFileSync(join(root, file), text);
      git('add', '--', ...written);
      git(
        'commit',
        '-q',
        '-m',
        subject,
        '-m',
        `${item.repository}:${item.version} built from ${item.tag} (${item.commit}), pushed to ${built.registry}, signed and attested; ` +
          'its digest in release/releases.json and the prod overlay.',
      );
    } catch (err) {
      const names = written;
      const restored = restoreWritten();
      throw new Refused(
        `${item.tag}: the image ${built.digest} was published but its commit failed: ${messageOf(err)}\n` +
          (restored
            ? `${names.join(', ')} put back as they were (git checkout HEAD --); run --publish again once the commit can be made`
            : `${names.join(', ')} could not be put back: restore them with git checkout HEAD -- ${names.join(' ')}`),
      );
    }
    written = [];
    say(`committed ${git('rev-parse', '--short', 'HEAD')} "${subject}"`);
  }
}

const USAGE = 'usage: node scripts/release.mjs [--only a,b] [--dry-run] | --tag [--dry-run] | --publish [--only <service,…>] [--dry-run]';

async function main() {
  let values;
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(2),
      options: {
        'dry-run': { type: 'boolean', default: false },
        only: { type: 'string' },
        tag: { type: 'boolean', default: false },
        publish: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    throw new Refused(`${messageOf(err)} (${USAGE})`);
  }
  if (values.help) {
    say(`${USAGE}\n(docs/releasing.md: the proposal, its tags, then its images by digest)`);
    return;
  }
  const dryRun = values['dry-run'];
  if (values.tag && values.publish) throw new Refused('--tag and --publish are two steps: one at a time');
  if (values.tag) {
    if (values.only) throw new Refused('--tag tags the release commits as they are: no --only');
    return tagReleases({ dryRun });
  }
  let only = null;
  if (values.only !== undefined) {
    const names = values.only
      .split(',')
      .map((name) => shortName(name.trim()))
      .filter(Boolean);
    const unknown = names.filter((name) => !RELEASED.includes(name));
    if (names.length === 0 || unknown.length > 0) {
      throw new Refused(
        `--only: ${unknown.length > 0 ? `unknown ${unknown.join(', ')}` : 'no name'} (one or more of ${RELEASED.join(', ')})`,
      );
    }
    only = new Set(names);
  }
  if (values.publish) {
    const packages = only ? [...only].filter((name) => !SERVICES.includes(name)) : [];
    if (packages.length > 0)
      throw new Refused(`--publish --only: ${packages.join(', ')} has no image (one or more of ${SERVICES.join(', ')})`);
    return publishImages({ only, dryRun });
  }
  return propose({ only, dryRun });
}

try {
  await main();
} catch (err) {
  if (!(err instanceof Refused)) throw err;
  console.error(`[release] ${err.message}`);
  process.exit(1);
}
