import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, relative } from 'node:path';

// Every `npm run` command resolves Node.js and pnpm one way (scripts/lib/toolchain.mjs, through
// scripts/run.mjs), never from what the machine's PATH happens to hold; every shell script says
// which command stopped it. These hold the rules over the whole tree, so a new script or a new
// `package.json` entry cannot bring the problem back.
const root = join(__dirname, '..', '..');
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  packageManager: string;
};

/** Files of the tree git tracks (and the untracked ones it does not ignore). */
function trackedFiles(): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .filter((file) => {
      try {
        return statSync(join(root, file)).isFile();
      } catch {
        return false; // deleted in the working tree
      }
    });
}

describe('npm run commands', () => {
  test('each starts through scripts/run.mjs (the pinned Node.js and pnpm) or is a shell script of the project', () => {
    const stray = Object.entries(rootPackage.scripts).filter(
      ([, command]) =>
        !command.split(' && ').every((part) => part.startsWith('node scripts/run.mjs ') || /^bash scripts\/[\w-]+\.sh\b/.test(part)),
    );
    expect(stray).toEqual([]);
  });

  test('run.mjs names each mode package.json uses', () => {
    const runner = readFileSync(join(root, 'scripts/run.mjs'), 'utf8');
    const modes = new Set(
      Object.values(rootPackage.scripts).flatMap((command) => [...command.matchAll(/node scripts\/run\.mjs (\S+)/g)].map((m) => m[1]!)),
    );
    for (const mode of modes) expect(runner).toMatch(new RegExp(`mode === '${mode}'|^  ${mode}: '`, 'm'));
  });
});

describe('scripts', () => {
  // The tools' code, not their tests (which may run the pinned pnpm by name on a PATH they set).
  const sources = trackedFiles().filter(
    (file) => /^(scripts|bench|packages\/[^/]+\/scripts|deploy)\/.*\.(mjs|js|cjs|ts)$/.test(file) && !/(^|\/)test\//.test(file),
  );

  test('none starts a pnpm by name (the one on PATH, whichever it is)', () => {
    const byName = /\b(?:spawn|spawnSync|execFile|execFileSync|exec|execSync|run|runLoud|runLogged|runStep|sh)\(\s*['"`]pnpm\b/;
    const offenders = sources.filter((file) => byName.test(readFileSync(join(root, file), 'utf8')));
    expect(offenders).toEqual([]);
  });

  test('every bash script stops loudly: errexit with errtrace and an ERR trap that names the command and line', () => {
    const shells = trackedFiles().filter((file) => {
      const first = readFileSync(join(root, file), 'utf8').split('\n', 1)[0]!;
      return /^#!.*\bbash\b/.test(first);
    });
    expect(shells).toEqual(expect.arrayContaining(['.ci/run', 'scripts/k8s/cluster.sh', 'scripts/k8s/build.sh']));
    for (const file of shells) {
      const text = readFileSync(join(root, file), 'utf8');
      expect({ file, errtrace: /^set -Eeuo pipefail$/m.test(text) }).toEqual({ file, errtrace: true });
      expect({ file, trap: /^trap '.*\$LINENO.*\$BASH_COMMAND.*' ERR$/m.test(text) }).toEqual({ file, trap: true });
    }
  });

  test('an ERR trap of theirs names the command that failed inside a function, where a silent exit 2 was', () => {
    const dir = mkdtempSync(join(tmpdir(), 'err-trap-'));
    try {
      const trap = readFileSync(join(root, 'scripts/k8s/cluster.sh'), 'utf8').match(/^trap '.*' ERR$/m)![0];
      const script = join(dir, 'probe.sh');
      writeFileSync(
        script,
        [
          '#!/bin/bash',
          'set -Eeuo pipefail',
          trap,
          'listing() { ls /no/such/folder | sort; }',
          'saved=$(listing)',
          'echo unreachable',
        ].join('\n'),
      );
      chmodSync(script, 0o755);
      const result = spawnSync('bash', [script], { encoding: 'utf8' });
      expect(result.status).toBe(2);
      expect(result.stdout).not.toContain('unreachable');
      expect(result.stderr).toMatch(/probe\.sh: line 5: `saved=\$\(listing\)` exited 2/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the toolchain resolver', () => {
  /** What scripts/lib/toolchain.mjs answers, asked from a Node.js process of its own (an ES module). */
  function ask(env: NodeJS.ProcessEnv): { version: string; pnpm: string; path: string[] } {
    const module = JSON.stringify(join(root, 'scripts/lib/toolchain.mjs'));
    const program = `import { PNPM_VERSION, pnpm, toolEnv } from ${module};
      console.log(JSON.stringify({ version: PNPM_VERSION, pnpm: pnpm(), path: toolEnv().PATH.split(${JSON.stringify(delimiter)}) }));`;
    return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8', env }));
  }

  test('pnpm is the release package.json names, from .tools/npm/, and a foreign pnpm first on PATH changes nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'foreign-pnpm-'));
    try {
      writeFileSync(join(dir, 'pnpm'), '#!/bin/sh\necho 10.99.0\nexit 97\n');
      chmodSync(join(dir, 'pnpm'), 0o755);
      const answer = ask({ ...process.env, PATH: `${dir}${delimiter}${process.env.PATH}` });
      expect(answer.version).toBe(rootPackage.packageManager.split('@')[1]);
      expect(relative(root, answer.pnpm)).toBe(join('.tools/npm', `pnpm@${answer.version}`, 'node_modules/.bin/pnpm'));
      // A child's PATH: this Node.js, then the pinned pnpm, then the rest (the foreign one too).
      expect(answer.path.slice(0, 2)).toEqual([join(process.execPath, '..'), join(answer.pnpm, '..')]);
      expect(answer.path.indexOf(dir)).toBeGreaterThan(1);
      const env = { ...process.env, PATH: answer.path.join(delimiter) };
      expect(execFileSync('sh', ['-c', 'command -v pnpm'], { encoding: 'utf8', env }).trim()).toBe(answer.pnpm);
      expect(execFileSync('pnpm', ['--version'], { encoding: 'utf8', env }).trim()).toBe(answer.version);
      expect(readdirSync(dir)).toEqual(['pnpm']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
