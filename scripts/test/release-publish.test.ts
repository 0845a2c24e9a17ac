import { execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GIT_ENV, releaseScratch, scratchDir } from './lib/scratch-git';

// `npm run release -- --publish` (scripts/release.mjs) on clones of this checkout: which tagged
// releases need their image, what it writes from a build's record (release/releases.json, the
// prod overlay's digest, one commit per image), what it refuses, and what it leaves when its commit
// fails or it is interrupted during the build. The build itself (podman, the registry,
// cosign) is replaced by a module ($MKT_RELEASE_IMAGE_BUILDER) that records what it was asked and
// answers a digest: docs/releasing.md "Publishing a release's images, as run" shows the real one.
const root = join(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- an ES module, loaded through SWC as CommonJS (scripts/jest.config.js)
const { releaseTagsOf } = require('../lib/release-subject.mjs') as { releaseTagsOf: (subject: string) => string[] | null };
jest.setTimeout(120_000);

const SERVICES = ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'];
const PROD = 'k8s/overlays/prod/kustomization.yaml';
const DEV = 'k8s/overlays/dev/kustomization.yaml';
const OVERLAYS = [PROD, DEV];
type Release = { version: string; tag: string; image?: string; digest?: string; registry?: string; commit: null };

const scratch = scratchDir('release-publish-');
const builder = join(scratch, 'fake-build.mjs');
writeFileSync(
  builder,
  `import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
// What the release asked for, and the checkout it was given: the tag's commit, in a worktree of its own.
export default async function build({ name, tag, commit, worktree, repository }) {
  const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: worktree, encoding: 'utf8' }).trim();
  const version = JSON.parse(execFileSync('cat', [join(worktree, 'services', name, 'package.json')], { encoding: 'utf8' })).version;
  appendFileSync(process.env.FAKE_BUILD_LOG, JSON.stringify({ name, tag, commit, head, repository, version, dockerfile: existsSync(join(worktree, 'docker/service.Dockerfile')) }) + '\\n');
  if ((process.env.FAKE_BUILD_FAIL ?? '').split(',').includes(name)) throw new Error('podman build ' + name + ' failed');
  // A build that never ends (until the release is interrupted): FAKE_BUILD_HANG names the service.
  if (process.env.FAKE_BUILD_HANG === name) await new Promise(() => setInterval(() => undefined, 1_000));
  return { registry: 'registry.test:5000', digest: 'sha256:' + createHash('sha256').update(name + '@' + commit).digest('hex'), revision: head };
}
`,
);

type Built = { name: string; tag: string; commit: string; head: string; repository: string; version: string; dockerfile: boolean };

function scratchRepo() {
  const { dir, git } = releaseScratch({ prefix: 'repo-', parent: scratch });
  // No image published yet, whatever this checkout has published since.
  const releases = JSON.parse(readFileSync(join(dir, 'release/releases.json'), 'utf8')) as Record<string, Release>;
  for (const release of Object.values(releases)) {
    delete release.digest;
    delete release.registry;
  }
  writeFileSync(join(dir, 'release/releases.json'), `${JSON.stringify(releases, null, 2)}\n`);
  for (const overlay of OVERLAYS)
    writeFileSync(join(dir, overlay), readFileSync(join(dir, overlay), 'utf8').replace(/, digest: 'sha256:[0-9a-f]+' \}/g, ' }'));
  git('add', '-A');
  git('commit', '--quiet', '--allow-empty', '-m', 'scratch: this checkout’s release script, no image published');
  const log = join(dir, '.git', 'fake-build.log');
  const file = (path: string) => readFileSync(join(dir, path), 'utf8');
  return {
    dir,
    git,
    file,
    releases: () => JSON.parse(file('release/releases.json')) as Record<string, Release>,
    /** The builds the fake was asked for, in order. */
    built: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as Built)
        : [],
    /** Tags `<name>@<its version in releases.json>` on `commit` (HEAD by default). */
    tag(names: string[], commit = 'HEAD') {
      const recorded = JSON.parse(file('release/releases.json')) as Record<string, Release>;
      for (const name of names) git('tag', '-a', recorded[name]!.tag, '-m', `${name} ${recorded[name]!.version}`, commit);
    },
    release: (args: string[], env: NodeJS.ProcessEnv = {}) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
        execFile(
          process.execPath,
          [join(dir, 'scripts/release.mjs'), ...args],
          { cwd: dir, env: { ...GIT_ENV, MKT_RELEASE_IMAGE_BUILDER: builder, FAKE_BUILD_LOG: log, ...env }, timeout: 100_000 },
          (err, stdout, stderr) => done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        ),
      ),
  };
}

const digestOf = (text: string) => /sha256:[0-9a-f]{64}/.exec(text)?.[0];
const worktrees = (git: (...args: string[]) => string) => git('worktree', 'list').split('\n').filter(Boolean);

describe('npm run release -- --publish (scripts/release.mjs)', () => {
  test('the plan: each tagged release reachable from HEAD without a digest; an untagged or unreachable one is said so; --dry-run builds and changes nothing', async () => {
    const repo = scratchRepo();
    const head = repo.git('rev-parse', 'HEAD');
    repo.tag(['wallet', 'gateway']);
    // review's tag on a commit HEAD does not contain.
    repo.git('checkout', '--quiet', '-b', 'side');
    repo.git('commit', '--quiet', '--allow-empty', '-m', 'elsewhere');
    repo.tag(['review']);
    repo.git('checkout', '--quiet', '-');
    const releases = repo.releases();

    const dry = await repo.release(['--publish', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('would publish:');
    expect(dry.stdout).toContain(`marketplace/wallet:${releases.wallet!.version} from ${releases.wallet!.tag} (${head.slice(0, 7)})`);
    expect(dry.stdout).toContain(`marketplace/gateway:${releases.gateway!.version} from ${releases.gateway!.tag}`);
    expect(dry.stdout).toContain(`catalog: ${releases.catalog!.tag} is not tagged yet`);
    expect(dry.stdout).toContain(`review: ${releases.review!.tag} is not reachable from HEAD`);
    expect(dry.stdout).not.toMatch(/^ {2}marketplace\/(catalog|crm|consultation|review):/m);
    expect(dry.stdout).toContain(`release: images ${releases.wallet!.tag} sha256:…`);
    expect(dry.stdout).toContain('dry run: nothing changed');
    expect(repo.built()).toEqual([]);
    expect(repo.git('rev-parse', 'HEAD')).toBe(head);

    const only = await repo.release(['--publish', '--only', 'wallet', '--dry-run']);
    expect(only.stdout).toContain('marketplace/wallet:');
    expect(only.stdout).not.toContain('marketplace/gateway:');

    const kit = await repo.release(['--publish', '--only', 'kit']);
    expect(kit.code).toBe(1);
    expect(kit.stderr).toContain('--publish --only: kit has no image');
  });

  test('a build record becomes the digest in releases.json and the prod overlay (dev keeps the tag), one commit per image built from its tag; a second run is a no-op', async () => {
    const repo = scratchRepo();
    repo.tag(['wallet', 'gateway']);
    const tagged = repo.git('rev-parse', 'HEAD');
    const tagsBefore = repo.git('show-ref', '--tags');
    const was = repo.releases();

    const made = await repo.release(['--publish']);
    expect(made.code).toBe(0);
    // Each built from its tag's commit, in a worktree of its own, removed afterwards.
    expect(repo.built().map(({ name, head, commit, version, dockerfile }) => ({ name, head, commit, version, dockerfile }))).toEqual([
      { name: 'gateway', head: tagged, commit: tagged, version: was.gateway!.version, dockerfile: true },
      { name: 'wallet', head: tagged, commit: tagged, version: was.wallet!.version, dockerfile: true },
    ]);
    expect(worktrees(repo.git)).toHaveLength(1);

    const releases = repo.releases();
    const wallet = releases.wallet!;
    expect(wallet).toEqual({ ...was.wallet, digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), registry: 'registry.test:5000' });
    expect(Object.keys(wallet)).toEqual(['version', 'tag', 'image', 'digest', 'registry', 'commit']);
    expect(releases.gateway!.digest).toMatch(/^sha256:/);
    for (const name of ['catalog', 'crm', 'consultation', 'review', 'kit']) expect(releases[name]).toEqual(was[name]);
    const prod = repo.file(PROD);
    expect(prod).toContain(`{ name: marketplace/wallet, newTag: '${wallet.version}', digest: '${wallet.digest}' }`);
    expect(prod).toContain(`{ name: marketplace/gateway, newTag: '${was.gateway!.version}', digest: '${releases.gateway!.digest}' }`);
    expect(prod).toContain(`{ name: marketplace/catalog, newTag: '${was.catalog!.version}' }`);
    // Dev's images are built and loaded on the machine: its overlay names the tags, no digest.
    const dev = repo.file(DEV);
    expect(dev).toContain(`{ name: marketplace/wallet, newTag: '${wallet.version}' }`);
    expect(dev).toContain(`{ name: marketplace/gateway, newTag: '${was.gateway!.version}' }`);
    expect(dev).not.toContain(", digest: '");

    // One commit per image, holding only those files; no tag made or moved.
    const subjects = repo.git('log', '--format=%s', `${tagged}..HEAD`).split('\n');
    expect(subjects).toEqual([
      `release: images ${wallet.tag} ${wallet.digest}`,
      `release: images ${was.gateway!.tag} ${releases.gateway!.digest}`,
    ]);
    expect(repo.git('show', '--name-only', '--format=', 'HEAD').split('\n').sort()).toEqual(['release/releases.json', PROD].sort());
    expect(repo.git('show-ref', '--tags')).toBe(tagsBefore);
    expect(repo.git('status', '--porcelain')).toBe('');
    // Not a release commit: --tag, the contract gates and the mixed-version run never take it for one.
    for (const subject of subjects) expect(releaseTagsOf(subject)).toBeNull();

    const head = repo.git('rev-parse', 'HEAD');
    const again = await repo.release(['--publish']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`wallet: ${wallet.tag} published (${wallet.digest})`);
    expect(again.stdout).toContain('nothing to publish');
    expect(repo.git('rev-parse', 'HEAD')).toBe(head);
    expect(repo.built()).toHaveLength(2);
  });

  test('--only wallet publishes the wallet alone', async () => {
    const repo = scratchRepo();
    repo.tag(['wallet', 'gateway']);
    const made = await repo.release(['--publish', '--only', 'wallet']);
    expect(made.code).toBe(0);
    expect(repo.built().map(({ name }) => name)).toEqual(['wallet']);
    expect(repo.releases().wallet!.digest).toBe(digestOf(repo.git('log', '-1', '--format=%s')));
    expect(repo.releases().gateway!.digest).toBeUndefined();
  });

  test('refused, changing nothing: a dirty working tree, a failed build; nothing tagged: nothing committed', async () => {
    const repo = scratchRepo();
    const head = repo.git('rev-parse', 'HEAD');

    const untagged = await repo.release(['--publish']);
    expect(untagged.code).toBe(0);
    expect(untagged.stdout).toContain('nothing to publish');
    expect(repo.git('rev-parse', 'HEAD')).toBe(head);

    repo.tag(['wallet', 'gateway']);
    writeFileSync(join(repo.dir, 'services/wallet/README.md'), 'edited\n');
    const dirty = await repo.release(['--publish']);
    expect(dirty.code).toBe(1);
    expect(dirty.stderr).toContain('the working tree has changes');
    expect(repo.built()).toEqual([]);
    repo.git('checkout', '--', '.');

    // gateway builds first and fails: no file written, no commit, no worktree left; wallet not tried.
    const failed = await repo.release(['--publish'], { FAKE_BUILD_FAIL: 'gateway' });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('gateway@');
    expect(failed.stderr).toContain('podman build gateway failed');
    expect(failed.stderr).toContain('nothing changed');
    expect(repo.built().map(({ name }) => name)).toEqual(['gateway']);
    expect(repo.git('rev-parse', 'HEAD')).toBe(head);
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(worktrees(repo.git)).toHaveLength(1);
    expect(repo.releases().gateway!.digest).toBeUndefined();
  });

  test('the next release of a published service names its new tag and drops the previous image’s digest', async () => {
    const repo = scratchRepo();
    repo.tag(['wallet']);
    expect((await repo.release(['--publish', '--only', 'wallet'])).code).toBe(0);
    const was = repo.releases().wallet!;
    writeFileSync(join(repo.dir, '.changeset', 'wallet-fix.md'), `---\n'@mkt/wallet': patch\n---\n\nA fix.\n`);
    repo.git('add', '.changeset');
    repo.git('commit', '--quiet', '-m', 'changeset wallet-fix');
    const made = await repo.release(['--only', 'wallet']);
    expect(made.code).toBe(0);
    const [major, minor, patch] = was.version.split('.').map(Number) as [number, number, number];
    const next = `${major}.${minor}.${patch + 1}`;
    expect(repo.releases().wallet).toEqual({ version: next, tag: `wallet@${next}`, image: `marketplace/wallet:${next}`, commit: null });
    for (const overlay of OVERLAYS) {
      expect(repo.file(overlay)).toContain(`{ name: marketplace/wallet, newTag: '${next}' }`);
      expect(repo.file(overlay)).not.toContain(was.digest);
    }
    // Not tagged yet: nothing to publish for the wallet until `--tag`.
    expect((await repo.release(['--publish', '--only', 'wallet', '--dry-run'])).stdout).toContain(`wallet@${next} is not tagged yet`);
  });

  test('every service the plan can name has a prod overlay entry to carry its digest, and a dev entry by tag alone', () => {
    for (const name of SERVICES) {
      expect(readFileSync(join(root, PROD), 'utf8')).toMatch(
        new RegExp(`\\{ name: marketplace/${name}, newTag: '[^']+'(, digest: 'sha256:[0-9a-f]{64}')? \\}`),
      );
      expect(readFileSync(join(root, DEV), 'utf8')).toMatch(new RegExp(`\\{ name: marketplace/${name}, newTag: '[^']+' \\}`));
    }
    expect(readFileSync(join(root, DEV), 'utf8')).not.toMatch(/, digest: '/);
  });

  test('a commit that fails after the build puts releases.json and the overlay back, says so, and leaves no worktree', async () => {
    const repo = scratchRepo();
    repo.tag(['wallet']);
    const head = repo.git('rev-parse', 'HEAD');
    const hook = join(repo.dir, '.git', 'hooks', 'pre-commit');
    mkdirSync(join(repo.dir, '.git', 'hooks'), { recursive: true });
    writeFileSync(hook, '#!/bin/sh\necho "pre-commit: refused for the test" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const tmp = scratchDir('tmp-', scratch);

    const failed = await repo.release(['--publish', '--only', 'wallet'], { TMPDIR: tmp });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('its commit failed');
    expect(failed.stderr).toContain(`release/releases.json, ${PROD} put back as they were`);
    expect(repo.built().map(({ name }) => name)).toEqual(['wallet']);
    expect(repo.git('rev-parse', 'HEAD')).toBe(head);
    expect(repo.git('status', '--porcelain')).toBe('');
    expect(repo.releases().wallet!.digest).toBeUndefined();
    expect(worktrees(repo.git)).toHaveLength(1);
    expect(readdirSync(tmp)).toEqual([]);

    // Once the commit can be made, the same run publishes.
    writeFileSync(hook, '#!/bin/sh\nexit 0\n');
    expect((await repo.release(['--publish', '--only', 'wallet'], { TMPDIR: tmp })).code).toBe(0);
    expect(repo.releases().wallet!.digest).toMatch(/^sha256:/);
  });

  test.each(['SIGTERM', 'SIGINT'] as const)(
    '%s during the build removes the tag’s worktree and the scratch directory, changes nothing, and exits with the signal’s code',
    async (signal) => {
      const repo = scratchRepo();
      repo.tag(['wallet']);
      const head = repo.git('rev-parse', 'HEAD');
      const tmp = scratchDir('tmp-', scratch);
      const log = join(repo.dir, '.git', 'fake-build.log');
      const child = spawn(process.execPath, [join(repo.dir, 'scripts/release.mjs'), '--publish', '--only', 'wallet'], {
        cwd: repo.dir,
        env: { ...GIT_ENV, MKT_RELEASE_IMAGE_BUILDER: builder, FAKE_BUILD_LOG: log, FAKE_BUILD_HANG: 'wallet', TMPDIR: tmp },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.resume();
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
        child.on('exit', (code, signalled) => done({ code, signal: signalled })),
      );
      // The build has started once the fake has recorded it (inside the tag's worktree).
      for (let waited = 0; repo.built().length === 0; waited += 100) {
        if (waited > 60_000) throw new Error('the build did not start');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(worktrees(repo.git)).toHaveLength(2);
      expect(readdirSync(tmp)).toHaveLength(1);
      child.kill(signal);

      expect(await exited).toEqual({ code: signal === 'SIGINT' ? 130 : 143, signal: null });
      expect(stderr).toContain(signal);
      expect(worktrees(repo.git)).toHaveLength(1);
      expect(readdirSync(tmp)).toEqual([]);
      expect(repo.git('rev-parse', 'HEAD')).toBe(head);
      expect(repo.git('status', '--porcelain')).toBe('');
    },
  );
});
