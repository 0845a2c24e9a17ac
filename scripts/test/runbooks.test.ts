import { join } from 'node:path';

// Every command the runbooks name exists as written (scripts/lib/runbooks.mjs): a runbook that names
// a script, subcommand or option that does not exist fails here.
const root = join(__dirname, '..', '..');
/* eslint-disable @typescript-eslint/no-require-imports -- an ES module, loaded through SWC as CommonJS (scripts/jest.config.js) */
const runbooks = require('../lib/runbooks.mjs') as {
  runbookFiles: (root: string) => string[];
  commandsOf: (markdown: string) => Array<{ line: number; kind: string; command: string; args: string[] }>;
  checkCommand: (root: string, found: unknown, scripts: Record<string, string>) => string | null;
  checkRunbooks: (
    root: string,
    files?: string[],
  ) => Array<{ file: string; line: number; kind: string; command: string; problem: string | null }>;
};
/* eslint-enable @typescript-eslint/no-require-imports */
const { scripts } = require(join(root, 'package.json')) as { scripts: Record<string, string> }; // eslint-disable-line @typescript-eslint/no-require-imports

test('every command named in README.md, docs/, k8s/README.md and the services’ READMEs exists as written', () => {
  const results = runbooks.checkRunbooks(root);
  const broken = results.filter((r) => r.problem).map((r) => `${r.file}:${r.line} ${r.command} → ${r.problem}`);
  expect(broken).toEqual([]);
  // The operations commands are among them, and each was run with --help.
  const commands = results.map((r) => r.command);
  for (const expected of [
    /^npm run dlq -- list$/,
    /^npm run dlq -- replay/,
    /^npm run dlq -- drop/,
    /^npm run restore -- s3:\/\//,
    /^marketplace-tools backup/,
    /^marketplace-tools migrate-queues/,
  ])
    expect(commands.some((command) => expected.test(command))).toBe(true);
}, 300_000);

test('a runbook naming a command that does not exist fails the check', () => {
  const doc = [
    'Then requeue them (`npm run dlq -- requeue`) or `npm run dlq -- list|purge <queue>`.',
    '```sh',
    'npm run backup -- --keep-weeks 4   # no such option',
    'podman run --rm localhost/marketplace-tools:dev dlq replay <queue> [--id <messageId>]',
    'kubectl -n marketplace run tools --image=marketplace-tools:0.1.0 -- restore-all',
    'node scripts/no-such-script.mjs',
    'npm run no-such-script',
    '```',
  ].join('\n');
  const found = runbooks.commandsOf(doc);
  const verdicts = found.map((f) => [f.command, runbooks.checkCommand(root, f, scripts) === null]);
  expect(verdicts).toEqual([
    ['npm run dlq -- requeue', false],
    ['npm run dlq -- list|purge <queue>', false],
    ['npm run backup -- --keep-weeks 4', false],
    ['marketplace-tools dlq replay <queue> [--id <messageId>]', true],
    ['marketplace-tools -- restore-all', false],
    ['node scripts/no-such-script.mjs', false],
    ['npm run no-such-script', false],
  ]);
}, 120_000);
