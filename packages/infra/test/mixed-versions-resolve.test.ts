import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workspaceRoot } from '../src/mongo';

// Which commit `npm run test:mixed` takes as a service's previous release
// (`node scripts/mixed-versions.mjs resolve`), in git repositories of the test's own.
const script = join(workspaceRoot(), 'scripts/mixed-versions.mjs');
const repos: string[] = [];
afterAll(() => {
  for (const repo of repos) rmSync(repo, { recursive: true, force: true });
});

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
};

/** A repository with one commit per subject (in order); returns it and each commit's sha. */
function repoWith(subjects: string[]): { repo: string; commits: string[] } {
  const repo = mkdtempSync(join(tmpdir(), 'mixed-resolve-'));
  repos.push(repo);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: gitEnv, encoding: 'utf8' }).trim();
  git('init', '--quiet', '--initial-branch=main');
  const commits = subjects.map((subject, index) => {
    writeFileSync(join(repo, 'file.txt'), `${index}\n`);
    git('add', 'file.txt');
    git('commit', '--quiet', '-m', subject, '-m', 'A body line: release: wallet@9.9.9 (not a subject).');
    return git('rev-parse', 'HEAD');
  });
  return { repo, commits };
}

function tag(repo: string, name: string, commit: string) {
  execFileSync('git', ['tag', '-a', name, '-m', name, commit], { cwd: repo, env: gitEnv });
}

function releasesJson(repo: string, content: object) {
  mkdirSync(join(repo, 'release'), { recursive: true });
  writeFileSync(join(repo, 'release', 'releases.json'), JSON.stringify(content));
}

function resolve(repo: string, ...args: string[]): Promise<{ code: number; found: Array<Record<string, string>>; stderr: string }> {
  return new Promise((done) =>
    execFile(process.execPath, [script, 'resolve', '--repo', repo, ...args], { timeout: 30_000 }, (err, stdout, stderr) =>
      done({
        code: err ? Number((err as { code?: number }).code ?? 1) : 0,
        found: stdout
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line)),
        stderr,
      }),
    ),
  );
}

describe('the previous release of a service (scripts/mixed-versions.mjs resolve)', () => {
  test('without release/releases.json: the newest <name>@<version> tag, by version (0.10.0 after 0.9.0), a prerelease before its release', async () => {
    // HEAD ('five') is no release: a checkout at one takes the release before it (below).
    const { repo, commits } = repoWith(['one', 'two', 'three', 'four', 'five']);
    tag(repo, 'wallet@0.9.0', commits[0]!);
    tag(repo, 'wallet@0.10.0', commits[1]!);
    tag(repo, 'wallet@0.11.0-rc.1', commits[3]!);
    tag(repo, 'walletx@5.0.0', commits[3]!);
    tag(repo, 'crm@0.1.0', commits[2]!);
    const { code, found } = await resolve(repo, 'wallet', 'crm');
    expect(code).toBe(0);
    expect(found).toEqual([
      { name: 'wallet', tag: 'wallet@0.11.0-rc.1', commit: commits[3], how: 'newest tag' },
      { name: 'crm', tag: 'crm@0.1.0', commit: commits[2], how: 'newest tag' },
    ]);
    tag(repo, 'wallet@0.11.0', commits[2]!);
    expect((await resolve(repo, 'wallet')).found[0]).toMatchObject({ tag: 'wallet@0.11.0', commit: commits[2] });
  });

  test('release/releases.json names the release, its tag locates it (a newer tag of an unreleased build is not it)', async () => {
    const { repo, commits } = repoWith(['one', 'two']);
    tag(repo, 'wallet@0.1.0', commits[0]!);
    tag(repo, 'wallet@0.2.0', commits[1]!);
    releasesJson(repo, { wallet: { version: '0.1.0', tag: 'wallet@0.1.0', image: 'marketplace/wallet:0.1.0', commit: null } });
    const { found } = await resolve(repo, 'wallet');
    expect(found).toEqual([{ name: 'wallet', tag: 'wallet@0.1.0', commit: commits[0], how: 'tag (release/releases.json)' }]);
  });

  test('a clone without tags: the commit releases.json records (the baseline), else the release commit found by its subject', async () => {
    const { repo, commits } = repoWith([
      'kit: the baseline',
      'release: crm@0.2.0, wallet@0.2.0',
      'wallet: a change',
      'release: wallet@0.2.01',
      'release: consultation@0.3.0',
    ]);
    releasesJson(repo, {
      crm: { version: '0.1.0', tag: 'crm@0.1.0', commit: commits[0] },
      wallet: { version: '0.2.0', tag: 'wallet@0.2.0', commit: null },
    });
    const { code, found } = await resolve(repo, 'crm', 'wallet');
    expect(code).toBe(0);
    expect(found).toEqual([
      { name: 'crm', tag: 'crm@0.1.0', commit: commits[0], how: 'commit recorded in release/releases.json (release/releases.json)' },
      // Not `release: wallet@0.2.01` (another version), and not the body lines every commit carries.
      { name: 'wallet', tag: 'wallet@0.2.0', commit: commits[1], how: 'release commit by its subject (release/releases.json)' },
    ]);
  });

  test('no releases.json and no tags: the newest release commit naming the service', async () => {
    const { repo, commits } = repoWith(['release: crm@0.2.0, wallet@0.2.0', 'release: wallet@0.3.0', 'release: review@1.0.0']);
    const { found } = await resolve(repo, 'wallet', 'crm');
    expect(found).toEqual([
      { name: 'wallet', tag: 'wallet@0.3.0', commit: commits[1], how: 'newest release commit by its subject' },
      { name: 'crm', tag: 'crm@0.2.0', commit: commits[0], how: 'newest release commit by its subject' },
    ]);
  });

  test('a checkout at a release commit takes the release before it (the newest lower tag, else an earlier release commit)', async () => {
    const { repo, commits } = repoWith([
      'kit: the baseline',
      'release: crm@0.2.0, wallet@0.2.0',
      'wallet: a change',
      'release: wallet@0.2.1',
    ]);
    releasesJson(repo, {
      crm: { version: '0.2.0', tag: 'crm@0.2.0', commit: null },
      wallet: { version: '0.2.1', tag: 'wallet@0.2.1', commit: null },
    });
    tag(repo, 'wallet@0.1.0', commits[0]!);
    tag(repo, 'wallet@0.2.0', commits[1]!);
    tag(repo, 'wallet@0.2.1', commits[3]!);
    tag(repo, 'crm@0.2.0', commits[1]!);
    expect((await resolve(repo, 'wallet', 'crm')).found).toEqual([
      { name: 'wallet', tag: 'wallet@0.2.0', commit: commits[1], how: 'newest lower tag; this checkout is wallet@0.2.1' },
      { name: 'crm', tag: 'crm@0.2.0', commit: commits[1], how: 'tag (release/releases.json)' },
    ]);
    // Asked for by name, the release is this checkout.
    expect((await resolve(repo, '--release', 'wallet@0.2.1', 'wallet')).found[0]).toMatchObject({ commit: commits[3] });

    for (const name of ['wallet@0.1.0', 'wallet@0.2.0', 'wallet@0.2.1'])
      execFileSync('git', ['tag', '-d', name], { cwd: repo, env: gitEnv });
    expect((await resolve(repo, 'wallet')).found).toEqual([
      {
        name: 'wallet',
        tag: 'wallet@0.2.0',
        commit: commits[1],
        how: 'earlier release commit by its subject; this checkout is wallet@0.2.1',
      },
    ]);
  });

  test('--release asks for one release by its tag; a release nowhere to be found fails saying what was looked for', async () => {
    const { repo, commits } = repoWith(['one', 'release: crm@0.2.0', 'three']);
    tag(repo, 'crm@0.1.0', commits[0]!);
    tag(repo, 'crm@0.3.0', commits[2]!);
    expect((await resolve(repo, '--release', 'crm@0.1.0', 'crm')).found).toEqual([
      { name: 'crm', tag: 'crm@0.1.0', commit: commits[0], how: 'tag (--release)' },
    ]);
    expect((await resolve(repo, '--release', 'crm@0.2.0', 'crm')).found[0]).toMatchObject({ commit: commits[1] });

    const missing = await resolve(repo, '--release', 'crm@0.4.0', 'crm');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('crm: release crm@0.4.0 (--release) not found: no tag crm@0.4.0');
    const none = await resolve(repo, 'review');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('review: no previous release: no entry in release/releases.json, no tag review@*');
  });
});
