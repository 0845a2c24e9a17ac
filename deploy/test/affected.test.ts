import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

// scripts/affected.mjs (`npm run test:affected`): which jest projects a change selects. The rules
// through --files (no git), the base (origin/main, the last release tags, --base) in a throwaway
// repository. Nothing is run: --list.
const root = join(__dirname, '..', '..');
const ALL = [
  'contracts',
  'kit',
  'infra',
  'gateway',
  'wallet',
  'catalog',
  'crm',
  'consultation',
  'review',
  'e2e',
  'deploy',
  'scripts',
  'client',
];
type Selection = { base: string | null; all: boolean; why: string | null; projects: string[]; reasons: Record<string, string[] | string> };

function affected(cwd: string, ...args: string[]): Selection {
  return JSON.parse(
    execFileSync(process.execPath, [join(cwd, 'scripts/affected.mjs'), '--list', '--json', ...args], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  ) as Selection;
}
const forFiles = (...files: string[]) => affected(root, '--files', files.join(','));

describe('the selection of a change', () => {
  test('a service: its own project and e2e (which drives every service through the gateway)', () => {
    expect(forFiles('services/wallet/src/domain/limits.ts')).toMatchObject({ all: false, projects: ['wallet', 'e2e'] });
    expect(forFiles('services/consultation/test/bookings.test.ts', 'services/review/package.json').projects).toEqual([
      'consultation',
      'review',
      'e2e',
    ]);
  });

  test('e2e alone; deploy for the deployment files, the release files and these scripts', () => {
    expect(forFiles('e2e/test/marketplace.test.ts').projects).toEqual(['e2e']);
    for (const file of [
      'k8s/overlays/prod/kustomization.yaml',
      'docker/service.Dockerfile',
      'docker-compose.yml',
      'release/releases.json',
      'scripts/affected.mjs',
      '.changeset/config.json',
      'deploy/check-k8s.mjs',
    ]) {
      expect([file, forFiles(file).projects]).toEqual([file, ['deploy']]);
    }
    expect(forFiles('scripts/migrate-queues.mjs').projects).toEqual(['e2e', 'scripts']); // and its --help in the runbooks test
    expect(forFiles('scripts/release.mjs').projects).toEqual(['deploy', 'scripts']); // its tests in both
    // Their unit tests, and the end-to-end tests' system and fixtures, which start and seed from them.
    expect(forFiles('scripts/system-env.mjs').projects).toEqual(['e2e', 'scripts']);
    expect(forFiles('scripts/lib/seed.mjs').projects).toEqual(['e2e', 'scripts']);
    expect(forFiles('scripts/test/lib/scratch-git.ts').projects).toEqual(['deploy', 'scripts']); // both release tests
  });

  test('the contract gates select their own tests; the released contracts nothing (the gates always run after the tests)', () => {
    expect(forFiles('scripts/contracts.mjs').projects).toEqual(['scripts']);
    expect(forFiles('scripts/contract-gates/http.mjs', 'scripts/test/contract-gates.test.ts').projects).toEqual(['scripts']);
    expect(forFiles('scripts/lib/go-tools.mjs').projects).toEqual(['deploy', 'scripts']);
    expect(forFiles('scripts/mixed-versions.mjs').projects).toEqual(['infra']);
    expect(
      forFiles('contracts/released/openapi.json', 'contracts/released/events/review.created@1.json', 'scripts/journey.mjs'),
    ).toMatchObject({ all: false, projects: [] });
  });

  test('documentation a test reads selects that test: docs/observability.md (metrics), k8s/README.md (manifests), the monitoring component', () => {
    expect(forFiles('docs/observability.md').projects).toEqual(['e2e', 'scripts']);
    expect(forFiles('k8s/README.md').projects).toEqual(['deploy', 'scripts']);
    expect(forFiles('k8s/components/monitoring/prometheus-rule.yaml').projects).toEqual(['e2e', 'deploy']);
  });

  test('a runbook selects the test that runs every command it names; the operations scripts select theirs', () => {
    for (const file of ['README.md', 'docs/releasing.md', 'docs/operations.md', 'services/wallet/README.md'])
      expect(forFiles(file).projects).toEqual(['scripts']);
    expect(forFiles('scripts/dlq.mjs', 'scripts/lib/runbooks.mjs')).toMatchObject({ all: false, projects: ['e2e', 'scripts'] });
  });

  test('documentation, benches and lint configuration select nothing', () => {
    const none = forFiles(
      'services/wallet/CHANGELOG.md',
      'packages/contracts/README.md',
      '.changeset/brave-lions-sing.md',
      'bench/writes.mjs',
      'eslint.config.mjs',
      '.prettierrc.json',
    );
    expect(none).toMatchObject({ all: false, projects: [] });
    expect(Object.values(none.reasons).every((reason) => Array.isArray(reason) && reason.length === 0)).toBe(true);
  });

  test.each([
    ['packages/contracts/src/events.ts', 'packages/contracts'],
    ['packages/kit/src/http/errors.ts', 'packages/kit'],
    ['packages/infra/src/mongo.ts', 'packages/infra'],
    ['pnpm-lock.yaml', 'root configuration'],
    ['package.json', 'root configuration'],
    ['tsconfig.base.json', 'root configuration'],
    ['jest.preset.js', 'root configuration'],
    ['scripts/jest-global-setup.cjs', 'root configuration'],
    ['.ci/run', 'root configuration'],
    ['scripts/somethingnew.mjs', 'no rule names it'],
  ])('%s runs everything (%s)', (file, why) => {
    const selection = forFiles('services/wallet/src/main.ts', file);
    expect(selection.all).toBe(true);
    expect(selection.why).toContain(why);
    expect(selection.projects).toEqual(ALL);
  });

  test('no change, nothing selected', () => {
    expect(forFiles()).toMatchObject({ all: false, projects: [] });
  });
});

describe('the base of a change', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'affected-test-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'affected test',
    GIT_AUTHOR_EMAIL: 'affected-test@example.invalid',
    GIT_COMMITTER_NAME: 'affected test',
    GIT_COMMITTER_EMAIL: 'affected-test@example.invalid',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
  };
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();
  const PACKAGE_DIRS = [
    'packages/contracts',
    'packages/kit',
    'packages/infra',
    'e2e',
    'deploy',
    ...ALL.slice(3, 9).map((s) => `services/${s}`),
  ];

  function repo(): string {
    const dir = mkdtempSync(join(scratch, 'repo-'));
    for (const file of [
      'scripts/affected.mjs',
      'scripts/lib/errors.mjs',
      'scripts/lib/toolchain.mjs',
      '.node-version',
      'package.json',
      ...PACKAGE_DIRS.map((d) => `${d}/package.json`),
    ]) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      cpSync(join(root, file), join(dir, file));
    }
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'baseline');
    return dir;
  }
  const change = (dir: string, file: string) => {
    writeFileSync(join(dir, file), `// ${Math.random()}\n`);
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', `change ${file}`);
  };

  test('without origin/main nor release tags: everything', () => {
    const dir = repo();
    change(dir, 'services/wallet/a.ts');
    expect(affected(dir)).toMatchObject({ base: null, all: true, why: 'no base to compare with' });
  });

  test('the last release tags: what changed since the commit they share (uncommitted and untracked files too)', () => {
    const dir = repo();
    for (const name of ['wallet', 'catalog', 'contracts']) git(dir, 'tag', '-a', `${name}@0.1.0`, '-m', 'baseline');
    change(dir, 'services/catalog/a.ts');
    git(dir, 'tag', '-a', 'catalog@0.1.1', '-m', 'catalog 0.1.1'); // catalog released since: the base stays the wallet's
    change(dir, 'services/wallet/a.ts');
    writeFileSync(join(dir, 'services/review/untracked.ts'), '// new\n');
    const selection = affected(dir);
    expect(selection.base).toContain('the last release tags');
    expect(selection.projects).toEqual(['wallet', 'catalog', 'review', 'e2e']);
  });

  test('origin/main first; --base over both; an unknown --base is refused', () => {
    const dir = repo();
    git(dir, 'tag', '-a', 'wallet@0.1.0', '-m', 'baseline');
    change(dir, 'services/wallet/a.ts');
    git(dir, 'update-ref', 'refs/remotes/origin/main', 'HEAD');
    const branchPoint = git(dir, 'rev-parse', 'HEAD');
    change(dir, 'services/crm/a.ts');
    expect(affected(dir)).toMatchObject({ base: 'origin/main', projects: ['crm', 'e2e'] });
    expect(affected(dir, '--base', 'wallet@0.1.0').projects).toEqual(['wallet', 'crm', 'e2e']);
    expect(affected(dir, `--base=${branchPoint}`).projects).toEqual(['crm', 'e2e']);
    const refused = spawnSync(process.execPath, [join(dir, 'scripts/affected.mjs'), '--list', '--base', 'nope'], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('--base nope: no such commit');
  });
});
