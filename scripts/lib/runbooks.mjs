// Every command the runbooks name must exist as written. Reads the documentation (README.md,
// docs/*.md, k8s/README.md, the services' READMEs), takes the commands out of its code spans and
// code blocks, and checks each one:
//   - `npm run <script> [-- args]`: the script is in package.json; for the operations commands
//     (backup, restore, reconcile, dlq) the arguments are run with `--help` through
//     scripts/tools.mjs, which fails on a subcommand or option that does not exist;
//   - `marketplace-tools <command> [args]` (the tools image, docker/tools.Dockerfile, as `podman
//     run` or a Kubernetes Job names it): the same, through scripts/tools.mjs;
//   - `node <path>.mjs|.js [args]`: the file exists; for the operations scripts (scripts/backup,
//     reconcile, dlq, migrate-queues, tools) it is run with the arguments and `--help`.
// Placeholders stay as values (`<queue>`), optional parts in brackets are left out (`[--id <id>]`),
// and `a|b` is each of a and b. No import.meta here: jest loads this module through SWC as CommonJS.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The documentation files whose commands must exist. */
export function runbookFiles(root) {
  const md = (dir) =>
    existsSync(join(root, dir))
      ? readdirSync(join(root, dir))
          .filter((name) => name.endsWith('.md'))
          .map((name) => join(root, dir, name))
      : [];
  const services = readdirSync(join(root, 'services'))
    .map((name) => join(root, 'services', name, 'README.md'))
    .filter((file) => existsSync(file));
  return [join(root, 'README.md'), ...md('docs'), join(root, 'k8s', 'README.md'), ...services];
}

/** The code of a markdown text, line by line: `{ line, text }` for each code span and code-block line. */
export function codeOf(markdown) {
  const out = [];
  let fenced = false;
  markdown.split('\n').forEach((raw, index) => {
    const line = index + 1;
    if (/^\s*(```|~~~)/.test(raw)) {
      fenced = !fenced;
      return;
    }
    if (fenced) {
      out.push({ line, text: raw.replace(/\s+#\s.*$/, '') });
      return;
    }
    for (const match of raw.matchAll(/`([^`]+)`/g)) out.push({ line, text: match[1] });
  });
  return out;
}

const OPERATIONS_SCRIPTS = { backup: 'backup', restore: 'restore', reconcile: 'reconcile', dlq: 'dlq' };
const OPERATIONS_FILES = {
  'scripts/backup.mjs': [],
  'scripts/reconcile.mjs': [],
  'scripts/dlq.mjs': [],
  'scripts/migrate-queues.mjs': [],
  'scripts/tools.mjs': [],
};

/** Shell-ish words of a command line (quotes kept simple), up to a pipe, `;`, `&&` or a redirection. */
function words(text) {
  const out = [];
  for (const word of text.trim().split(/\s+/)) {
    if (['|', ';', '&&', '||', '>', '2>&1', '<<'].includes(word) || word.startsWith('(') || /^[<>]\S*\.\w+$/.test(word)) break;
    if (word) out.push(word.replace(/^["']|["']$/g, ''));
  }
  return out;
}

/** The arguments as an example means them: bracketed optional parts and ellipses left out. */
export function exampleArgs(args) {
  const out = [];
  let depth = 0;
  for (const word of args) {
    const opens = (word.match(/\[/g) ?? []).length;
    const closes = (word.match(/\]/g) ?? []).length;
    if (depth === 0 && opens === 0) {
      if (!['…', '...'].includes(word) && !word.endsWith('…')) out.push(word);
    }
    depth = Math.max(0, depth + opens - closes);
  }
  return out;
}

/** Each alternative of `a|b` words (not inside placeholders): `list|replay <q>` → two commands. */
function alternatives(args) {
  const index = args.findIndex((word) => word.includes('|') && !word.startsWith('<'));
  if (index < 0) return [args];
  return args[index].split('|').flatMap((choice) => alternatives([...args.slice(0, index), choice, ...args.slice(index + 1)]));
}

/** The commands of one markdown text: `{ line, kind, command, check }`. */
export function commandsOf(markdown) {
  const found = [];
  for (const { line, text } of codeOf(markdown)) {
    for (const match of text.matchAll(/(?:^|[\s(])npm run ([a-z][\w:-]*)((?:\s+\S+)*)/g)) {
      const all = words(match[2] ?? '');
      const dashes = all.indexOf('--');
      const args = dashes === 0 ? all.slice(1) : [];
      found.push({ line, kind: 'npm', script: match[1], args: exampleArgs(args), command: `npm run ${match[1]}${match[2] ?? ''}`.trim() });
    }
    for (const match of text.matchAll(
      /(?:^|\s)node ((?:scripts|bench|deploy|services|packages|e2e)\/[\w./-]+\.(?:mjs|js|cjs))((?:\s+\S+)*)/g,
    ))
      found.push({
        line,
        kind: 'node',
        file: match[1],
        args: exampleArgs(words(match[2] ?? '')),
        command: `node ${match[1]}${match[2] ?? ''}`.trim(),
      });
    for (const match of text.matchAll(/(?:^|[\s/"'[=])marketplace-tools(?::[\w.-]+)?((?:\s+\S+)+)/g)) {
      const args = exampleArgs(words(match[1]));
      if (args[0] === '--') args.shift(); // `kubectl run … --image=marketplace-tools:<tag> -- <command>`
      if (args.length === 0 || !/^[a-z]/.test(args[0])) continue;
      found.push({ line, kind: 'tools', args, command: `marketplace-tools${match[1]}`.trim() });
    }
  }
  return found;
}

function runHelp(root, file, args) {
  const result = spawnSync(process.execPath, [join(root, file), ...args, '--help'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, AGE: process.env.AGE ?? '' },
  });
  return result.status === 0 ? null : `exit ${result.status}: ${(result.stderr || result.stdout).trim().split('\n')[0]}`;
}

/** Checks one command; returns null when it exists as written, else why not. */
export function checkCommand(root, found, scripts) {
  if (found.kind === 'npm') {
    if (!(found.script in scripts)) return `package.json has no script ${found.script}`;
    const tool = OPERATIONS_SCRIPTS[found.script];
    if (!tool) return null;
    for (const args of alternatives(found.args)) {
      const why = runHelp(root, 'scripts/tools.mjs', [tool, ...args]);
      if (why) return `${tool} ${args.join(' ')} --help: ${why}`;
    }
    return null;
  }
  if (found.kind === 'node') {
    if (!existsSync(join(root, found.file))) return `${found.file} does not exist`;
    if (!(found.file in OPERATIONS_FILES)) return null;
    for (const args of alternatives(found.args)) {
      const why = runHelp(root, found.file, args);
      if (why) return `${found.file} ${args.join(' ')} --help: ${why}`;
    }
    return null;
  }
  for (const args of alternatives(found.args)) {
    const why = runHelp(root, 'scripts/tools.mjs', args);
    if (why) return `marketplace-tools ${args.join(' ')} --help: ${why}`;
  }
  return null;
}

/** Every command of every runbook, checked: `{ file, line, command, problem }`. */
export function checkRunbooks(root, files = runbookFiles(root)) {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const results = [];
  const seen = new Map();
  for (const file of files) {
    for (const found of commandsOf(readFileSync(file, 'utf8'))) {
      const key = JSON.stringify([found.kind, found.script, found.file, found.args]);
      if (!seen.has(key)) seen.set(key, checkCommand(root, found, scripts));
      results.push({ file: relative(root, file), line: found.line, kind: found.kind, command: found.command, problem: seen.get(key) });
    }
  }
  return results;
}
