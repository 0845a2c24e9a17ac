import { execFile } from 'node:child_process';
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GIT_ENV, releaseScratch } from './lib/scratch-git';

// `npm run release` (scripts/release.mjs) on scratch copies of the repository: a `git clone` of
// this checkout's commit with this checkout's release script, its node_modules linked, none of
// the pending changesets, and no scripts/contracts.mjs (the contract snapshot and its build are
// the gates' own tests' business; without the script the release skips them, as it says).
jest.setTimeout(120_000);

const SERVICES = ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'];
const dirOf = (name: string) => (SERVICES.includes(name) ? `services/${name}` : `packages/${name}`);

type Repo = {
  dir: string;
  git: (...args: string[]) => string;
  version: (name: string) => string;
  file: (path: string) => string;
  changeset: (id: string, bumps: Record<string, 'patch' | 'minor' | 'major'>, summary: string) => void;
  release: (...args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>;
};

function scratchRepo(): Repo {
  const { dir, git } = releaseScratch({ prefix: 'release-' });
  git('add', '-A');
  git('commit', '--quiet', '--allow-empty', '-m', 'scratch: this checkout’s release script, no pending changeset, no contract gates');
  const file = (path: string) => readFileSync(join(dir, path), 'utf8');
  return {
    dir,
    git,
    file,
    version: (name) => (JSON.parse(file(`${dirOf(name)}/package.json`)) as { version: string }).version,
    changeset(id, bumps, summary) {
      const front = Object.entries(bumps).map(([name, bump]) => `'@mkt/${name}': ${bump}`);
      writeFileSync(join(dir, '.changeset', `${id}.md`), `---\n${front.join('\n')}\n---\n\n${summary}\n`);
      git('add', '.changeset');
      git('commit', '--quiet', '-m', `changeset ${id}`);
    },
    release: (...args) =>
      new Promise((done) =>
        execFile(
          process.execPath,
          [join(dir, 'scripts/release.mjs'), ...args],
          { cwd: dir, env: GIT_ENV, timeout: 100_000 },
          (err, stdout, stderr) => done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        ),
      ),
  };
}

/** `0.2.0` + patch → `0.2.1` (the versions of this checkout move with each real release). */
function bumped(version: string, bump: 'patch' | 'minor'): string {
  const [major, minor, patch] = version.split('.').map(Number) as [number, number, number];
  return bump === 'patch' ? `${major}.${minor}.${patch + 1}` : `${major}.${minor + 1}.0`;
}

describe('npm run release (scripts/release.mjs)', () => {
  test('no cascade: a kit or contracts change bumps only the packages its changeset names', async () => {
    const repo = scratchRepo();
    const was = Object.fromEntries(['kit', 'contracts', 'wallet', 'gateway', 'review', 'infra', 'client'].map((n) => [n, repo.version(n)]));
    const walletLog = repo.file('services/wallet/CHANGELOG.md');
    const walletEntry = /\{ name: marketplace\/wallet, [^}]*\}/.exec(repo.file('k8s/overlays/prod/kustomization.yaml'))?.[0];
    repo.changeset('kit-retry', { kit: 'minor' }, 'The bus retries a publish once.');
    repo.changeset('contracts-field', { contracts: 'patch' }, 'A description fixed.');

    const dry = await repo.release('--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`kit ${was.kit} -> ${bumped(was.kit!, 'minor')}`);
    expect(dry.stdout).toMatch(/not bumped \(depend on a bumped package, named by no selected changeset\): .*wallet/);
    expect(dry.stdout).not.toMatch(/^ {2}wallet /m);

    const made = await repo.release();
    expect(made.code).toBe(0);
    expect(repo.git('log', '-1', '--format=%s')).toBe(
      `release: contracts@${bumped(was.contracts!, 'patch')}, kit@${bumped(was.kit!, 'minor')}`,
    );
    expect(repo.version('kit')).toBe(bumped(was.kit!, 'minor'));
    for (const name of ['wallet', 'gateway', 'review', 'infra', 'client']) expect(repo.version(name)).toBe(was[name]);
    expect(repo.file('services/wallet/CHANGELOG.md')).toBe(walletLog);
    // The wallet's entry as it was: its tag, and its image's digest once published.
    expect(walletEntry).toMatch(
      new RegExp(`^\\{ name: marketplace/wallet, newTag: '${was.wallet}'(, digest: 'sha256:[0-9a-f]{64}')? \\}$`),
    );
    expect(repo.file('k8s/overlays/prod/kustomization.yaml')).toContain(walletEntry);
    expect(repo.git('status', '--porcelain')).toBe('');

    // The author says the wallet is affected: then it is released with kit.
    repo.changeset('kit-and-wallet', { kit: 'patch', wallet: 'patch' }, 'The wallet uses the retry.');
    expect((await repo.release()).code).toBe(0);
    expect(repo.version('wallet')).toBe(bumped(was.wallet!, 'patch'));
    expect(repo.version('gateway')).toBe(was.gateway);
    expect(repo.file('services/wallet/CHANGELOG.md')).toContain('The wallet uses the retry.');
  });

  test('--only wallet,review: only the changesets naming those; one naming an unselected package too is refused', async () => {
    const repo = scratchRepo();
    const was = Object.fromEntries(['wallet', 'review', 'catalog'].map((n) => [n, repo.version(n)]));
    repo.changeset('wallet-fix', { wallet: 'patch' }, 'A wallet fix.');
    repo.changeset('review-field', { review: 'minor' }, 'A review field.');
    repo.changeset('catalog-fix', { catalog: 'patch' }, 'A catalog fix.');
    repo.changeset('wallet-and-catalog', { wallet: 'patch', catalog: 'patch' }, 'Both.');
    const head = repo.git('rev-parse', 'HEAD');

    const typo = await repo.release('--only', 'walet');
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('--only: unknown walet');
    const refused = await repo.release('--only', 'wallet,review');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('.changeset/wallet-and-catalog.md (wallet, catalog)');
    expect(repo.git('rev-parse', 'HEAD')).toBe(head);
    expect(repo.git('status', '--porcelain')).toBe('');

    repo.git('rm', '--quiet', '.changeset/wallet-and-catalog.md');
    repo.git('commit', '--quiet', '-m', 'split it later');
    const made = await repo.release('--only', '@mkt/wallet,review');
    expect(made.code).toBe(0);
    expect(made.stdout).toContain('left pending (not selected): .changeset/catalog-fix.md');
    const wallet = bumped(was.wallet!, 'patch');
    const review = bumped(was.review!, 'minor');
    expect(repo.git('log', '-1', '--format=%s')).toBe(`release: wallet@${wallet}, review@${review}`);
    expect(repo.version('catalog')).toBe(was.catalog);
    expect(existsSync(join(repo.dir, '.changeset/catalog-fix.md'))).toBe(true);
    expect(existsSync(join(repo.dir, '.changeset/wallet-fix.md'))).toBe(false);
    // The released service's entry names its new tag (its old digest dropped until --publish); the
    // others' entries, digest included, are as they were.
    const catalogEntry = (text: string) => text.match(/\{ name: marketplace\/catalog, [^}]*\}/)?.[0];
    for (const path of ['k8s/overlays/prod/kustomization.yaml', 'k8s/overlays/dev/kustomization.yaml']) {
      const overlay = repo.file(path);
      expect(overlay).toContain(`{ name: marketplace/wallet, newTag: '${wallet}' }`);
      expect(catalogEntry(overlay)).toMatch(new RegExp(`^\\{ name: marketplace/catalog, newTag: '${was.catalog}'`));
      expect(catalogEntry(overlay)).toBe(catalogEntry(repo.git('show', `HEAD~1:${path}`)));
    }
    const releases = JSON.parse(repo.file('release/releases.json')) as Record<string, { version: string; tag: string }>;
    expect(releases.wallet).toMatchObject({ version: wallet, tag: `wallet@${wallet}` });
    expect(releases.catalog!.version).toBe(was.catalog);
    expect(repo.git('status', '--porcelain')).toBe('');
  });

  test('the proposal is one commit with no tag; --tag tags it, annotated, once', async () => {
    const repo = scratchRepo();
    const wallet = bumped(repo.version('wallet'), 'patch');
    repo.changeset('wallet-log', { wallet: 'patch' }, 'The wallet logs the transfer id.');
    expect((await repo.release()).code).toBe(0);
    const proposal = repo.git('rev-parse', 'HEAD');
    expect(repo.git('log', '-1', '--format=%s')).toBe(`release: wallet@${wallet}`);
    expect(repo.git('log', '-1', '--format=%b')).toContain('The wallet logs the transfer id.');
    expect(repo.git('show', '--name-only', '--format=', 'HEAD').split('\n').sort()).toEqual(
      [
        '.changeset/wallet-log.md',
        'k8s/overlays/dev/kustomization.yaml',
        'k8s/overlays/prod/kustomization.yaml',
        'release/releases.json',
        'services/wallet/CHANGELOG.md',
        'services/wallet/package.json',
      ].sort(),
    );
    expect(repo.git('tag', '--list')).toBe('');

    // Merged (a merge commit on top): the tags name the release commit, not the merge.
    repo.git('commit', '--quiet', '--allow-empty', '-m', 'Merge the release proposal');
    const dry = await repo.release('--tag', '--dry-run');
    expect(dry.stdout).toContain(`would tag wallet@${wallet} -> ${proposal.slice(0, 7)}`);
    expect(repo.git('tag', '--list')).toBe('');
    const tagged = await repo.release('--tag');
    expect(tagged.code).toBe(0);
    expect(repo.git('rev-parse', `wallet@${wallet}^{commit}`)).toBe(proposal);
    expect(repo.git('cat-file', '-t', `wallet@${wallet}`)).toBe('tag');
    expect(repo.git('tag', '-l', '--format=%(contents)', `wallet@${wallet}`)).toContain('The wallet logs the transfer id.');
    const again = await repo.release('--tag');
    expect(again.stdout).toContain('nothing to tag');

    // A tag of that name elsewhere is not moved.
    repo.git('tag', '-d', `wallet@${wallet}`);
    repo.git('tag', `wallet@${wallet}`, 'HEAD');
    const moved = await repo.release('--tag');
    expect(moved.code).toBe(1);
    expect(moved.stderr).toContain(`tag wallet@${wallet} names`);
  });

  test('a dirty working tree is refused and nothing changes; nothing pending does nothing', async () => {
    const repo = scratchRepo();
    const head = repo.git('rev-parse', 'HEAD');
    const idle = await repo.release();
    expect(idle.code).toBe(0);
    expect(idle.stdout).toContain('nothing to release');
    expect(repo.git('rev-parse', 'HEAD')).toBe(head);
    // A clone without tags: --tag makes the tags of the release commits in its history, each on
    // the commit whose subject names it (none when the history has no release yet).
    const releaseCommits = repo.git('log', '-E', '--grep=^release: [a-z]+@', '--format=%H %s').split('\n').filter(Boolean);
    await repo.release('--tag');
    for (const line of releaseCommits) {
      const [commit, , ...tags] = line.split(' ');
      for (const tag of tags.map((t) => t.replace(/,$/, '')))
        expect([tag, repo.git('rev-parse', `${tag}^{commit}`)]).toEqual([tag, commit]);
    }
    expect((await repo.release('--tag')).stdout).toContain('nothing to tag');
    expect(repo.git('rev-parse', 'HEAD')).toBe(head);

    repo.changeset('wallet-fix', { wallet: 'patch' }, 'A wallet fix.');
    const withChangeset = repo.git('rev-parse', 'HEAD');
    const version = repo.version('wallet');
    writeFileSync(join(repo.dir, 'services/wallet/README.md'), `${repo.file('services/wallet/README.md')}\nan edit\n`);
    const dirty = await repo.release();
    expect(dirty.code).toBe(1);
    expect(dirty.stderr).toContain('the working tree has changes');
    expect(repo.git('rev-parse', 'HEAD')).toBe(withChangeset);
    expect(repo.version('wallet')).toBe(version);
    expect(existsSync(join(repo.dir, '.changeset/wallet-fix.md'))).toBe(true);
    repo.git('checkout', '--', 'services/wallet/README.md');
    writeFileSync(join(repo.dir, 'stray.txt'), 'untracked\n');
    expect((await repo.release()).code).toBe(1);
    unlinkSync(join(repo.dir, 'stray.txt'));
    expect(repo.git('rev-parse', 'HEAD')).toBe(withChangeset);
  });
});
