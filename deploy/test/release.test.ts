import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cloneWithModules, GIT_ENV, git, scratchDir } from '../../scripts/test/lib/scratch-git';

// scripts/release.mjs (docs/releasing.md) in throwaway repositories: a copy of what it reads and
// writes (package.json files, CHANGELOGs, .changeset/, release/releases.json, the overlays), the
// baseline tags <name>@0.1.0 on its first commit, the workspace's node_modules linked in
// (scripts/test/lib/scratch-git.ts, as scripts/test/release.test.ts makes its clones). The
// proposal (`release`) commits, `release --tag` tags (scripts/test/release.test.ts: the same on
// clones of the repository, and `--only`).
const root = join(__dirname, '..', '..');
const SERVICES = ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'];
const PACKAGES = ['contracts', 'kit', 'infra', 'client'];
const NAMES = [...SERVICES, ...PACKAGES];
const dirOf = (name: string) => (SERVICES.includes(name) ? `services/${name}` : `packages/${name}`);
const PROD = 'k8s/overlays/prod/kustomization.yaml';
const DEV = 'k8s/overlays/dev/kustomization.yaml';
const OVERLAYS = [PROD, DEV];

const scratch = scratchDir('release-test-');
const template = join(scratch, 'template');

beforeAll(() => {
  const files = [
    'package.json',
    'pnpm-workspace.yaml',
    '.prettierrc.json',
    '.changeset/config.json',
    '.changeset/README.md',
    'release/releases.json',
    'scripts/release.mjs',
    'scripts/lib/errors.mjs',
    'scripts/lib/release-subject.mjs',
    'e2e/package.json',
    'deploy/package.json',
    ...OVERLAYS,
    ...NAMES.map((name) => `${dirOf(name)}/package.json`),
  ];
  for (const file of files) {
    mkdirSync(dirname(join(template, file)), { recursive: true });
    cpSync(join(root, file), join(template, file));
  }
  writeFileSync(join(template, '.gitignore'), 'node_modules\n.dev/\n');
  // The template's own baseline: 0.1.0 for every name, whatever this checkout has released since.
  for (const name of NAMES) {
    const pkg = join(template, dirOf(name), 'package.json');
    writeFileSync(pkg, readFileSync(pkg, 'utf8').replace(/"version": "[^"]+"/, '"version": "0.1.0"'));
    writeFileSync(join(template, dirOf(name), 'CHANGELOG.md'), `# @mkt/${name}\n\n## 0.1.0\n\nThe baseline.\n`);
  }
  const baseline = NAMES.map((name) => [
    name,
    { version: '0.1.0', tag: `${name}@0.1.0`, ...(SERVICES.includes(name) ? { image: `marketplace/${name}:0.1.0` } : {}), commit: null },
  ]);
  writeFileSync(join(template, 'release/releases.json'), `${JSON.stringify(Object.fromEntries(baseline), null, 2)}\n`);
  for (const overlay of OVERLAYS) {
    const file = join(template, overlay);
    // 0.1.0, no image published (`release --publish` writes a digest beside the tag).
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(/(\{ name: marketplace\/[\w-]+, newTag: ')[^']*'(?:, digest: '[^']*')? \}/g, "$10.1.0' }"),
    );
  }
  git(template, 'init', '-q', '-b', 'main');
  git(template, 'add', '-A');
  git(template, 'commit', '-q', '-m', 'baseline');
  for (const name of NAMES) git(template, 'tag', '-a', `${name}@0.1.0`, '-m', `${name} 0.1.0`);
});

/** A fresh clone of the template (with its tags), with one commit adding `changesets` (file → content). */
function repo(changesets: Record<string, string> = {}): string {
  const dir = cloneWithModules(template, { parent: scratch });
  for (const [file, content] of Object.entries(changesets)) writeFileSync(join(dir, '.changeset', file), content);
  if (Object.keys(changesets).length > 0) {
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'a change and its changeset');
  }
  return dir;
}

const changeset = (bumps: Record<string, string>, summary: string) =>
  `---\n${Object.entries(bumps)
    .map(([name, type]) => `'@mkt/${name}': ${type}`)
    .join('\n')}\n---\n\n${summary}\n`;

function release(dir: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [join(dir, 'scripts/release.mjs'), ...args], {
    cwd: dir,
    env: GIT_ENV,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const tags = (dir: string) => git(dir, 'tag', '--list').split('\n').filter(Boolean).sort();
const newTags = (dir: string) => tags(dir).filter((tag) => !tag.endsWith('@0.1.0'));
const version = (dir: string, name: string) =>
  (JSON.parse(readFileSync(join(dir, dirOf(name), 'package.json'), 'utf8')) as { version: string }).version;
const releases = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'release/releases.json'), 'utf8')) as Record<
    string,
    { version: string; tag: string; image?: string; commit: string | null }
  >;
/** The overlay's `images:` entries (a published image's with its digest): service → newTag. */
const overlayEntries = (dir: string, overlay: string) => [
  ...readFileSync(join(dir, overlay), 'utf8').matchAll(/\{ name: marketplace\/([\w-]+), newTag: '([^']*)'(?:, digest: '([^']*)')? \}/g),
];
const overlayTags = (dir: string, overlay: string) => Object.fromEntries(overlayEntries(dir, overlay).map((m) => [m[1], m[2]]));

test('a changeset naming contracts and the services it affects releases those alone (no cascade): versions, CHANGELOGs, releases.json, overlays, one commit; --tag a tag each', () => {
  const services = Object.fromEntries(SERVICES.map((name) => [name, 'patch']));
  const dir = repo({ 'currency.md': changeset({ contracts: 'minor', ...services }, 'booking.created carries the currency') });
  const before = git(dir, 'rev-parse', 'HEAD');
  const { code, stdout, stderr } = release(dir);
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  // kit and infra depend on contracts, and no changeset names them (the client only as a devDependency).
  expect(stdout).toContain('not bumped (depend on a bumped package, named by no selected changeset): kit, infra');

  const expected: Record<string, string> = { contracts: '0.2.0', kit: '0.1.0', infra: '0.1.0', client: '0.1.0' };
  for (const name of SERVICES) expected[name] = '0.1.1';
  for (const name of NAMES) expect([name, version(dir, name)]).toEqual([name, expected[name]]);
  expect(newTags(dir)).toEqual([]);
  expect(release(dir, '--tag').code).toBe(0);
  const bumped = NAMES.filter((name) => expected[name] !== '0.1.0');
  expect(newTags(dir)).toEqual(bumped.map((name) => `${name}@${expected[name]}`).sort());

  // One commit on top, its subject naming every release (how a clone without tags finds it).
  expect(git(dir, 'rev-parse', 'HEAD~1')).toBe(before);
  const subject = git(dir, 'log', '-1', '--format=%s');
  expect(subject.startsWith('release: ')).toBe(true);
  expect(subject.slice('release: '.length).split(', ').sort()).toEqual(newTags(dir));
  // Every tag annotated, on the release commit, with the CHANGELOG entry as its message.
  for (const tag of newTags(dir)) {
    expect(git(dir, 'cat-file', '-t', tag)).toBe('tag');
    expect(git(dir, 'rev-list', '-n', '1', tag)).toBe(git(dir, 'rev-parse', 'HEAD'));
  }
  expect(git(dir, 'tag', '-l', '--format=%(contents)', 'contracts@0.2.0')).toContain('booking.created carries the currency');
  expect(git(dir, 'tag', '-l', '--format=%(contents)', 'wallet@0.1.1')).toContain('booking.created carries the currency');

  expect(readFileSync(join(dir, 'packages/contracts/CHANGELOG.md'), 'utf8')).toMatch(
    /^# @mkt\/contracts\n\n## 0\.2\.0\n\n### Minor Changes\n\n- (?:[0-9a-f]{7}: )?booking\.created carries the currency\n\n## 0\.1\.0\n/,
  );
  expect(readFileSync(join(dir, 'services/wallet/CHANGELOG.md'), 'utf8')).toMatch(
    /^# @mkt\/wallet\n\n## 0\.1\.1\n[\s\S]*booking\.created carries the currency[\s\S]*## 0\.1\.0\n/,
  );
  expect(readFileSync(join(dir, 'packages/kit/CHANGELOG.md'), 'utf8')).not.toContain('0.1.1');

  const released = releases(dir);
  expect(released.wallet).toEqual({ version: '0.1.1', tag: 'wallet@0.1.1', image: 'marketplace/wallet:0.1.1', commit: null });
  expect(released.contracts).toEqual({ version: '0.2.0', tag: 'contracts@0.2.0', commit: null });
  for (const overlay of OVERLAYS) expect(overlayTags(dir, overlay)).toEqual(Object.fromEntries(SERVICES.map((name) => [name, '0.1.1'])));

  expect(existsSync(join(dir, '.changeset/currency.md'))).toBe(false);
  expect(git(dir, 'status', '--porcelain')).toBe('');
  for (const service of SERVICES) expect(stdout).toContain(`marketplace/${service}:0.1.1`);
  expect(stdout).toContain('scripts/contracts.mjs not found');
});

test('a changeset on wallet releases the wallet alone; the others keep their versions, tags, overlay tags and release entries', () => {
  const dir = repo({ 'limit.md': changeset({ wallet: 'patch' }, 'Top-ups above the daily limit answer 422') });
  const { code, stdout } = release(dir);
  expect(code).toBe(0);
  expect(release(dir, '--tag').code).toBe(0);
  expect(newTags(dir)).toEqual(['wallet@0.1.1']);
  expect(git(dir, 'log', '-1', '--format=%s')).toBe('release: wallet@0.1.1');
  for (const name of NAMES) expect([name, version(dir, name)]).toEqual([name, name === 'wallet' ? '0.1.1' : '0.1.0']);

  const released = releases(dir);
  const baseline = git(dir, 'rev-parse', 'wallet@0.1.0^{commit}');
  expect(released.wallet).toEqual({ version: '0.1.1', tag: 'wallet@0.1.1', image: 'marketplace/wallet:0.1.1', commit: null });
  expect(released.catalog).toEqual({ version: '0.1.0', tag: 'catalog@0.1.0', image: 'marketplace/catalog:0.1.0', commit: null });
  expect(released.contracts?.tag).toBe('contracts@0.1.0');
  expect(baseline).toMatch(/^[0-9a-f]{40}$/);
  for (const overlay of OVERLAYS) {
    expect(overlayTags(dir, overlay)).toEqual({ ...Object.fromEntries(SERVICES.map((name) => [name, '0.1.0'])), wallet: '0.1.1' });
  }
  expect(git(dir, 'show', '--format=', '--name-only', 'HEAD').split('\n').sort()).toEqual(
    [
      '.changeset/limit.md',
      'k8s/overlays/dev/kustomization.yaml',
      'k8s/overlays/prod/kustomization.yaml',
      'release/releases.json',
      'services/wallet/CHANGELOG.md',
      'services/wallet/package.json',
    ].sort(),
  );
  expect(stdout).toContain('marketplace/wallet:0.1.1');
  expect(stdout).not.toContain('marketplace/catalog:');

  // The next wallet change releases 0.1.2 on top of it.
  writeFileSync(join(dir, '.changeset/again.md'), changeset({ wallet: 'minor' }, 'Transfers carry a note'));
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'another change');
  expect(release(dir).code).toBe(0);
  expect(release(dir, '--tag').code).toBe(0);
  expect(newTags(dir)).toEqual(['wallet@0.1.1', 'wallet@0.2.0']);
  expect(overlayTags(dir, OVERLAYS[0]!).wallet).toBe('0.2.0');
});

test('nothing pending: nothing committed, nothing tagged', () => {
  const dir = repo();
  const head = git(dir, 'rev-parse', 'HEAD');
  const { code, stdout } = release(dir);
  expect(code).toBe(0);
  expect(stdout).toContain('nothing to release');
  expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
  expect(newTags(dir)).toEqual([]);
});

test('changesets that bump nothing (`changeset add --empty`) are consumed, nothing tagged', () => {
  const dir = repo({ 'empty.md': '---\n---\n' });
  const head = git(dir, 'rev-parse', 'HEAD');
  const { code, stdout } = release(dir);
  expect(code).toBe(0);
  expect(stdout).toContain('nothing to release');
  expect(git(dir, 'rev-parse', 'HEAD~1')).toBe(head);
  expect(git(dir, 'log', '-1', '--format=%s')).not.toMatch(/^release:/);
  expect(existsSync(join(dir, '.changeset/empty.md'))).toBe(false);
  expect(newTags(dir)).toEqual([]);
});

test('--dry-run prints the plan (the dependants left alone too) and changes nothing', () => {
  const dir = repo({ 'kit.md': changeset({ kit: 'patch' }, 'a kit fix') });
  const head = git(dir, 'rev-parse', 'HEAD');
  const { code, stdout } = release(dir, '--dry-run');
  expect(code).toBe(0);
  expect(stdout).toContain('kit 0.1.0 -> 0.1.1 (1 changeset: .changeset/kit.md)');
  expect(stdout).toContain(`not bumped (depend on a bumped package, named by no selected changeset): ${SERVICES.join(', ')}`);
  expect(stdout).not.toMatch(/(contracts|infra|wallet) 0\.1\.0 ->/);
  expect(stdout).toContain('dry run: nothing changed');
  expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
  expect(git(dir, 'status', '--porcelain', '--ignored')).toBe('!! node_modules');
  expect(newTags(dir)).toEqual([]);
});

test('refuses a dirty working tree and an existing tag, changing nothing', () => {
  const dir = repo({ 'w.md': changeset({ wallet: 'patch' }, 'fix') });
  writeFileSync(join(dir, 'services/wallet/stray.txt'), 'uncommitted');
  const dirty = release(dir);
  expect(dirty.code).toBe(1);
  expect(dirty.stderr).toContain('the working tree has changes');
  rmSync(join(dir, 'services/wallet/stray.txt'));

  git(dir, 'tag', '-a', 'wallet@0.1.1', '-m', 'made by hand');
  const head = git(dir, 'rev-parse', 'HEAD');
  const taken = release(dir);
  expect(taken.code).toBe(1);
  expect(taken.stderr).toContain('tag wallet@0.1.1 exists already');
  expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
  expect(git(dir, 'status', '--porcelain')).toBe('');
});

test('the contracts snapshot runs when scripts/contracts.mjs exists, and what it writes is part of the release commit', () => {
  const dir = repo({ 'c.md': changeset({ contracts: 'patch' }, 'a description fixed') });
  writeFileSync(
    join(dir, 'scripts/contracts.mjs'),
    "import { mkdirSync, writeFileSync } from 'node:fs';\n" +
      "if (process.argv[2] === 'check') process.exit(0);\n" +
      "if (process.argv[2] !== 'snapshot') process.exit(2);\n" +
      "mkdirSync('contracts/released', { recursive: true });\n" +
      "writeFileSync('contracts/released/openapi.json', '{}\\n');\n",
  );
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'a stand-in snapshot');
  const { code, stdout } = release(dir);
  expect(code).toBe(0);
  expect(stdout).toContain('running node scripts/contracts.mjs snapshot');
  expect(git(dir, 'show', '--format=', '--name-only', 'HEAD').split('\n')).toContain('contracts/released/openapi.json');
});

test('the contract gates refuse → no release; a failure after the versions moved → the release undone, the tree as it was', () => {
  const gate = (script: string) => {
    const dir = repo({ 'c.md': changeset({ contracts: 'patch' }, 'a field removed') });
    writeFileSync(join(dir, 'scripts/contracts.mjs'), script);
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'a stand-in gate');
    return { dir, head: git(dir, 'rev-parse', 'HEAD') };
  };
  const refused = gate("if (process.argv[2] === 'check') { console.error('REFUSED: a breaking change'); process.exit(1); }\n");
  const first = release(refused.dir);
  expect(first.code).toBe(1);
  expect(first.stderr).toContain('contracts.mjs check failed');
  expect(git(refused.dir, 'rev-parse', 'HEAD')).toBe(refused.head);
  expect(git(refused.dir, 'status', '--porcelain')).toBe('');
  expect(newTags(refused.dir)).toEqual([]);

  const broken = gate("if (process.argv[2] === 'snapshot') process.exit(3);\n");
  const second = release(broken.dir);
  expect(second.code).toBe(1);
  expect(second.stderr).toContain('the release was undone');
  expect(git(broken.dir, 'rev-parse', 'HEAD')).toBe(broken.head);
  expect(git(broken.dir, 'status', '--porcelain')).toBe('');
  expect(version(broken.dir, 'contracts')).toBe('0.1.0');
  expect(newTags(broken.dir)).toEqual([]);
});

test('the proposal is made on a branch of its own; merged into main, --tag tags the release commit', () => {
  const dir = repo({ 'w.md': changeset({ wallet: 'patch' }, 'fix') });
  git(dir, 'checkout', '-q', '-b', 'release-proposal');
  expect(release(dir).code).toBe(0);
  const proposal = git(dir, 'rev-parse', 'HEAD');
  expect(newTags(dir)).toEqual([]);
  git(dir, 'checkout', '-q', 'main');
  git(dir, 'merge', '-q', '--no-ff', '-m', 'Merge release-proposal', 'release-proposal');
  const { code, stdout } = release(dir, '--tag');
  expect(code).toBe(0);
  expect(stdout).toContain(`tagged wallet@0.1.1 -> ${proposal.slice(0, 7)}`);
  expect(stdout).not.toContain('note: tagged on');
  expect(git(dir, 'rev-parse', 'wallet@0.1.1^{commit}')).toBe(proposal);
});

// The repository itself: what the release script keeps in step.
describe('this repository', () => {
  const released = releases(root);

  test('release/releases.json names every service and package at its package.json version, with its tag (and image)', () => {
    expect(Object.keys(released).sort()).toEqual([...NAMES].sort());
    for (const name of NAMES) {
      const entry = released[name]!;
      expect([name, entry.version]).toEqual([name, version(root, name)]);
      expect(entry.tag).toBe(`${name}@${entry.version}`);
      expect(entry.image).toBe(SERVICES.includes(name) ? `marketplace/${name}:${entry.version}` : undefined);
      expect(entry.commit === null || /^[0-9a-f]{40}$/.test(entry.commit)).toBe(true);
      // Its CHANGELOG's latest entry is that version.
      expect([name, /\n## (\S+)\n/.exec(readFileSync(join(root, dirOf(name), 'CHANGELOG.md'), 'utf8'))?.[1]]).toEqual([
        name,
        entry.version,
      ]);
    }
  });

  test('both overlays pin each service to its own release; prod by digest too, dev by tag alone', () => {
    for (const overlay of OVERLAYS)
      expect(overlayTags(root, overlay)).toEqual(Object.fromEntries(SERVICES.map((name) => [name, released[name]!.version])));
    // A published image's digest (`release --publish`) in prod is the one release/releases.json records.
    const digests = (overlay: string) => Object.fromEntries(overlayEntries(root, overlay).map((m) => [m[1], m[3]]));
    expect(digests(PROD)).toEqual(Object.fromEntries(SERVICES.map((name) => [name, (released[name] as { digest?: string }).digest])));
    // Dev's images are built and loaded on the machine (IfNotPresent): a digest only the publisher's registry has would not be found.
    expect(digests(DEV)).toEqual(Object.fromEntries(SERVICES.map((name) => [name, undefined])));
  });
});
