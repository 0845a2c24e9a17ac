// What the gates compare with: the released contracts of the last release point, from git — not
// whatever `contracts/released/` holds in the change under test (a change could otherwise
// re-snapshot, edit or delete them and pass). Only `npm run release` refreshes them: it runs
// `contracts.mjs snapshot` and commits `release: …`.
// No `import.meta` here: the jest tests load this module through SWC as CommonJS.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeEventSchemas } from './events.mjs';
import { RELEASE_SUBJECT } from '../lib/release-subject.mjs';
import { processFailure } from '../lib/errors.mjs';

export const RELEASED_DIR = 'contracts/released';
const FIRST_SNAPSHOT = `${RELEASED_DIR}/openapi.json`;

/**
 * git's output as text, or as bytes with `{ buffer: true }`.
 * @overload
 * @param {string} root
 * @param {string[]} args
 * @returns {string}
 */
/**
 * @overload
 * @param {string} root
 * @param {string[]} args
 * @param {{ buffer: true }} options
 * @returns {Buffer}
 */
/**
 * @param {string} root
 * @param {string[]} args
 * @param {{ buffer?: boolean }} [options]
 * @returns {string | Buffer}
 */
function git(root, args, { buffer = false } = {}) {
  return execFileSync('git', ['-C', root, ...args], {
    encoding: buffer ? 'buffer' : 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Why `root` has no usable history (not a repository of its own, shallow, no git), or null. */
function noHistory(root) {
  let top;
  try {
    top = git(root, ['rev-parse', '--show-toplevel']).trim();
  } catch (err) {
    const failure = processFailure(err);
    return `not a git repository (${
      String(failure.stderr ?? failure.message)
        .trim()
        .split('\n')[0]
    })`;
  }
  if (realpathSync(top) !== realpathSync(root)) return `not a git repository of its own (the enclosing one is ${top})`;
  if (git(root, ['rev-parse', '--is-shallow-repository']).trim() === 'true')
    return 'a shallow clone (fetch the history: git fetch --unshallow)';
  return null;
}

/**
 * The last release point reachable from HEAD: the newest release commit (`release: <name>@<version>, …`,
 * scripts/lib/release-subject.mjs), else the commit that first added contracts/released/openapi.json; null when neither.
 */
export function lastReleasePoint(root) {
  const log = git(root, ['log', '--format=%H%x09%s', 'HEAD']).split('\n').filter(Boolean);
  const commits = log.map((line) => ({ commit: line.slice(0, line.indexOf('\t')), subject: line.slice(line.indexOf('\t') + 1) }));
  const release = commits.find(({ subject }) => RELEASE_SUBJECT.test(subject));
  if (release) return { ...release, how: 'the newest release commit', headIsRelease: release.commit === commits[0]?.commit };
  const added = git(root, ['log', '--diff-filter=A', '--format=%H', 'HEAD', '--', FIRST_SNAPSHOT]).split('\n').filter(Boolean).pop();
  if (!added) return null;
  const subject = git(root, ['log', '-1', '--format=%s', added]).trim();
  return { commit: added, subject, how: `the commit that first added ${FIRST_SNAPSHOT} (no release commit yet)`, headIsRelease: false };
}

/** What differs in contracts/released/ between `commit` and the working tree (committed or not, untracked included). */
export function releasedDrift(root, commit) {
  const tracked = git(root, ['diff', '--no-renames', '--name-status', commit, '--', RELEASED_DIR])
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [status, file] = line.split('\t');
      return { status: { A: 'added', D: 'deleted', M: 'modified' }[status[0]] ?? status, file };
    });
  const untracked = git(root, ['ls-files', '--others', '--exclude-standard', '--', RELEASED_DIR])
    .split('\n')
    .filter(Boolean)
    .map((file) => ({ status: 'added (untracked)', file }));
  return [...tracked, ...untracked];
}

/** Writes the files of contracts/released/ at `commit` under `dir` (as `<dir>/openapi.json`, `<dir>/events/…`). */
function extract(root, commit, dir) {
  const files = git(root, ['ls-tree', '-r', '--name-only', commit, '--', `${RELEASED_DIR}/`])
    .split('\n')
    .filter(Boolean);
  for (const file of files) {
    const target = join(dir, file.slice(RELEASED_DIR.length + 1));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, git(root, ['show', `${commit}:${file}`], { buffer: true }));
  }
}

/** A missing released document or an empty/missing events/ directory, as refusals. */
function incomplete(dir, where) {
  const problems = [];
  if (!existsSync(join(dir, 'openapi.json'))) problems.push(`${where} has no openapi.json`);
  const events = join(dir, 'events');
  if (!existsSync(events) || !readdirSync(events).some((name) => /@\d+\.json$/.test(name)))
    problems.push(`${where} has no event schemas (events/<type>@<version>.json): an empty or missing events/ would gate nothing`);
  return problems;
}

const REFRESH =
  'Only `npm run release` refreshes contracts/released/ (it runs `node scripts/contracts.mjs snapshot` and commits `release: …`): restore it (git checkout <release point> -- contracts/released) and let the release snapshot the change.';

/**
 * The released contracts the gates compare with. With history: those of the last release point,
 * written under `scratch`; refused (`problems`) when contracts/released/ in the working tree
 * differs from them and HEAD is not itself a release commit. Without history (no repository of
 * its own, shallow): contracts/released/ in the working tree, with a warning.
 * → { dir, point, drift, problems, warnings }
 */
export function releasedBaseline(root, scratch) {
  const working = join(root, RELEASED_DIR);
  const why = noHistory(root);
  const point = why ? null : lastReleasePoint(root);
  if (!point) {
    const warning = `WARNING: ${why ? `${root} is ${why}` : `no release point in the history (no \`release: …\` commit, no commit adding ${FIRST_SNAPSHOT})`}: the gates compare with contracts/released/ AS THE CHANGE LEFT IT, which the change itself may have edited. CI must run on a full clone.`;
    return { dir: working, point: null, drift: [], problems: incomplete(working, RELEASED_DIR), warnings: [warning] };
  }
  const drift = releasedDrift(root, point.commit);
  const problems = [];
  if (drift.length > 0 && !point.headIsRelease)
    problems.push(
      [
        `${RELEASED_DIR}/ differs from the last release point ${point.commit.slice(0, 12)} "${point.subject}" (${point.how}), and HEAD is not a release commit:`,
        ...drift.map(({ status, file }) => `  ${status}: ${file}`),
        REFRESH,
      ].join('\n'),
    );
  const dir = join(scratch, 'released');
  extract(root, point.commit, dir);
  problems.push(...incomplete(dir, `${RELEASED_DIR}/ at ${point.commit.slice(0, 12)}`));
  return { dir, point, drift, problems, warnings: [] };
}

/** The public OpenAPI document exactly as the gateway serves it at /openapi.json, as a released file. */
export const openApiText = (c) => `${JSON.stringify(c.buildOpenApi(), null, 2)}\n`;

/**
 * `snapshot`: writes the current contracts of `c` (@mkt/contracts) into `dir` as released:
 * openapi.json, events/envelope.json and events/<type>@<version>.json (events/ replaced). Only
 * `npm run release` runs it on contracts/released/. → the number of event schemas written.
 */
export function writeReleased(dir, c) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'openapi.json'), openApiText(c));
  const schemas = c.releasedEventContracts();
  writeEventSchemas(join(dir, 'events'), schemas);
  return Object.keys(schemas).length;
}
