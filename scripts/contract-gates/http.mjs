// The HTTP contract gate: oasdiff (a pinned Go module) compares the released OpenAPI document with
// the current one. Every breaking change (oasdiff levels ERR and WARN: both can break a client)
// must be acknowledged by its own line of a changeset (`.changeset/*.md` naming at least one
// package, whose body becomes the release notes):
//   acknowledge-breaking: <oasdiff rule id> <METHOD> <path> — <why>
// Additive changes (a new path such as a /v2 one, a new optional field) pass and are listed; so do
// removed optional parts (INFO findings whose id says `removed`), under their own heading.
// No `import.meta` here: the jest tests load this module through SWC as CommonJS.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureGoTool } from '../lib/go-tools.mjs';
import { processFailure } from '../lib/errors.mjs';

export const OASDIFF = { module: 'github.com/oasdiff/oasdiff', version: 'v1.36.0' };

/** oasdiff's binary, installed into `<toolsDir>/go/oasdiff@<version>/` the first time. */
export const ensureOasdiff = (toolsDir, log) => ensureGoTool(toolsDir, 'oasdiff', OASDIFF, log);

const LEVELS = { 3: 'ERR', 2: 'WARN', 1: 'INFO' };

/** oasdiff's JSON answer; it exits 1 when `--fail-on` matched, its report still on stdout. */
function oasdiffJson(oasdiff, args) {
  let stdout;
  try {
    stdout = execFileSync(oasdiff, [...args, '--format', 'json'], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    const failure = processFailure(err);
    if (failure.status !== 1 || !failure.stdout)
      throw new Error(`oasdiff ${args[0]} failed: ${String(failure.stderr ?? failure.message).trim()}`);
    stdout = String(failure.stdout);
  }
  const findings = JSON.parse(stdout.trim() || '[]') ?? [];
  return findings.map((f) => ({
    id: f.id,
    level: LEVELS[f.level] ?? String(f.level),
    operation: f.operation ?? '',
    path: f.path ?? '',
    text: f.text,
  }));
}

/**
 * The changes from `base` to `revision` (OpenAPI files): `breaking` is what
 * `oasdiff breaking base revision --fail-on ERR` reports (levels ERR and WARN, both refused unless
 * acknowledged); `changes` is the whole changelog (additive ones and removed optional parts at
 * level INFO).
 */
export function diffOpenApi(oasdiff, base, revision) {
  const breaking = oasdiffJson(oasdiff, ['breaking', base, revision, '--fail-on', 'ERR']);
  const changes = oasdiffJson(oasdiff, ['changelog', base, revision]);
  return { breaking, changes };
}

// The reason follows a separator with blanks around it, so `GET /a-b` is a path without a reason.
const ACK = /^\s*acknowledge-breaking:\s*(\S+)\s+(\S+)\s+(\S+)\s+(?:—|--|:)\s+(\S.*)$/;
const BUMP = /^\s*['"]?([^'"\s:]+)['"]?\s*:\s*['"]?(patch|minor|major)['"]?\s*$/;

/** The packages a changeset's front matter bumps (`'@mkt/gateway': major`); none without front matter. */
function bumpedIn(text) {
  const front = /^---\r?\n([\s\S]*?)^---\s*$/m.exec(text);
  if (!front || front.index !== 0) return [];
  return front[1]
    .split(/\r?\n/)
    .map((line) => BUMP.exec(line)?.[1])
    .filter(Boolean);
}

/**
 * The acknowledgements of the changesets in `dir` (`*.md`): one per line
 * `acknowledge-breaking: <rule id> <METHOD> <path> — <why>` (`-` as METHOD for a change that is
 * not an operation's; `—`, `--` or `:` with blanks around before the reason). Each line
 * acknowledges one finding. `.changeset/README.md` (changesets' own) is not a changeset. A line
 * that starts so but does not parse is a problem, not ignored; so is an acknowledgement in a
 * changeset that bumps no package (`changeset version` would write it to no CHANGELOG: it would
 * never reach the release notes).
 */
export function readAcknowledgements(dir) {
  if (!existsSync(dir)) return { acknowledgements: [], problems: [] };
  const acknowledgements = [];
  const problems = [];
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.md') && n !== 'README.md')
    .sort()) {
    const text = readFileSync(join(dir, name), 'utf8');
    const bumped = bumpedIn(text);
    let found = 0;
    text.split('\n').forEach((line, index) => {
      if (!/^\s*acknowledge-breaking:/.test(line)) return;
      found += 1;
      const match = ACK.exec(line);
      const where = `${name}:${index + 1}`;
      if (!match) problems.push(`${where}: expected "acknowledge-breaking: <rule id> <METHOD> <path> — <why>", got "${line.trim()}"`);
      else
        acknowledgements.push({
          id: match[1],
          operation: match[2] === '-' ? '' : match[2].toUpperCase(),
          path: match[3],
          why: match[4].trim(),
          where,
        });
    });
    if (found > 0 && bumped.length === 0)
      problems.push(
        `${name}: acknowledges a breaking change but bumps no package (its front matter names none), so \`changeset version\` writes it to no CHANGELOG and it never reaches the release notes: name what the change releases, e.g. '@mkt/contracts': major`,
      );
  }
  return { acknowledgements, problems };
}

const acknowledges = (ack, finding) =>
  ack.id === finding.id && ack.operation === finding.operation.toUpperCase() && ack.path === finding.path;

/**
 * The verdict on a diff: `refused` = breaking changes (ERR and WARN) no acknowledgement line is
 * left for, `acknowledged` = those one line each acknowledges (N findings with the same rule,
 * method and path need N lines; oasdiff's JSON names the property only in its text), `removed` =
 * the changelog's INFO findings that remove an optional part (`response-optional-property-removed`...:
 * a client must already cope with its absence), `additive` = the other INFO entries (new paths, new
 * optional fields...), `unused` = the lines left over. `ok` when nothing is refused and every
 * acknowledgement line parsed.
 */
export function judgeOpenApi({ breaking, changes }, { acknowledgements, problems }) {
  const left = [...acknowledgements];
  const refused = [];
  const acknowledged = [];
  for (const finding of breaking) {
    const index = left.findIndex((ack) => acknowledges(ack, finding));
    if (index === -1) refused.push(finding);
    else acknowledged.push({ ...finding, why: left.splice(index, 1)[0].why });
  }
  const info = changes.filter((f) => f.level === 'INFO' && f.id !== 'api-version-not-bumped');
  const removed = info.filter((f) => f.id.includes('removed'));
  const additive = info.filter((f) => !f.id.includes('removed'));
  return { ok: refused.length === 0 && problems.length === 0, refused, acknowledged, removed, additive, unused: left, problems };
}

/** A plain text table: one row per finding, the columns as wide as their widest cell. */
export function table(rows, columns) {
  if (rows.length === 0) return '';
  const cells = [columns.map((c) => c.title), ...rows.map((row) => columns.map((c) => String(row[c.key] || '-')))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i].length)));
  return cells.map((line) => line.map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')).join('\n');
}

const COLUMNS = [
  { key: 'id', title: 'RULE' },
  { key: 'operation', title: 'OPERATION' },
  { key: 'path', title: 'PATH' },
  { key: 'text', title: 'TEXT' },
];
const LEVELED = [{ key: 'level', title: 'LEVEL' }, ...COLUMNS];

/** The verdict as a report for people. */
export function reportOpenApi(verdict) {
  const lines = [];
  const section = (title, rows, columns = COLUMNS) => {
    if (rows.length === 0) return;
    lines.push(`${title} (${rows.length}):`, table(rows, columns).replace(/^/gm, '  '));
  };
  section('REFUSED: breaking changes (ERR and WARN) without an acknowledgement', verdict.refused, [...LEVELED]);
  for (const problem of verdict.problems) lines.push(`REFUSED: ${problem}`);
  section('Breaking changes acknowledged in .changeset/', verdict.acknowledged, [...LEVELED, { key: 'why', title: 'WHY' }]);
  section('Removed optional parts (clients must already cope with their absence)', verdict.removed);
  section('Additive', verdict.additive);
  for (const ack of verdict.unused)
    lines.push(`note: ${ack.where} acknowledges ${ack.id} ${ack.operation || '-'} ${ack.path}, which this change does not make (again)`);
  if (verdict.refused.length > 0)
    lines.push(
      'A breaking change breaks clients of the released API. Make it additive (a new optional field, a new /v2 path),',
      'or declare it in a changeset that bumps a package, one line per finding (two findings with the same rule,',
      'method and path need two lines): acknowledge-breaking: <rule id> <METHOD> <path> — <why> (docs/contracts.md).',
    );
  if (lines.length === 0) lines.push('No change to the released OpenAPI document.');
  return lines.join('\n');
}
