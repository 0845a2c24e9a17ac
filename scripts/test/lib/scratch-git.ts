import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

// Throwaway git repositories for the tests of the scripts that commit and tag (the release script:
// scripts/test/release.test.ts on clones of this checkout, deploy/test/release.test.ts on a
// template of what it reads): one identity, no user or system git configuration, the workspace's
// node_modules linked in and ignored, every directory removed after the test file.
const root = join(__dirname, '..', '..', '..');

/** git's environment in a scratch repository: a fixed identity, nothing read from the machine's configuration. */
export const GIT_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'release test',
  GIT_AUTHOR_EMAIL: 'release-test@example.invalid',
  GIT_COMMITTER_NAME: 'release test',
  GIT_COMMITTER_EMAIL: 'release-test@example.invalid',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
};

/** `git <args>` in `cwd`; its output, trimmed. Throws on a non-zero exit. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' }).trim();
}

const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new empty directory under `parent` (the system's temp directory by default), removed after the test file. */
export function scratchDir(prefix: string, parent = tmpdir()): string {
  const dir = mkdtempSync(join(parent, prefix));
  made.push(dir);
  return dir;
}

/**
 * A clone of `source` (a path) in a new scratch directory, the workspace's node_modules linked in
 * and ignored (.git/info/exclude); `tags: false` leaves the source's tags out.
 */
export function cloneWithModules(
  source: string,
  { prefix = 'repo-', parent, tags = true }: { prefix?: string; parent?: string; tags?: boolean } = {},
) {
  const dir = scratchDir(prefix, parent);
  git(dirname(dir), 'clone', '--quiet', ...(tags ? [] : ['--no-tags']), source, dir);
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, '.git/info/exclude'), 'node_modules\n');
  return dir;
}

/**
 * A clone of this checkout (no tags) for the release script's tests: the working tree's
 * `scripts/release.mjs` and the modules it imports copied in (uncommitted changes included), no
 * pending changeset, no contract gates (their own tests); staged, not committed. `{ dir, git }`.
 */
export function releaseScratch(options: { prefix?: string; parent?: string } = {}) {
  const dir = cloneWithModules(root, { ...options, tags: false });
  const inDir = (...args: string[]) => git(dir, ...args);
  for (const file of ['scripts/release.mjs', 'scripts/lib/errors.mjs', 'scripts/lib/release-subject.mjs'])
    copyFileSync(join(root, file), join(dir, file));
  inDir('rm', '--quiet', 'scripts/contracts.mjs');
  const pending = readdirSync(join(dir, '.changeset')).filter((file) => file.endsWith('.md') && file !== 'README.md');
  if (pending.length > 0) inDir('rm', '--quiet', ...pending.map((file) => `.changeset/${file}`));
  return { dir, git: inDir };
}
