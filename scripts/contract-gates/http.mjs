// The HTTP contract gate: oasdiff (a pinned Go module) compares the released OpenAPI document with
// the current one. Every breaking change (oasdiff level ERR) must be acknowledged by a line of a
// changeset (`.changeset/*.md`, whose body becomes the release notes):
//   acknowledge-breaking: <oasdiff rule id> <METHOD> <path> — <why>
// Additive changes (a new path such as a /v2 one, a new optional field) pass and are listed.
// No `import.meta` here: the jest tests load this module through SWC as CommonJS.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureGoTool } from '../lib/go-tools.mjs';

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
    if (err.status !== 1 || !err.stdout) throw new Error(`oasdiff ${args[0]} failed: ${String(err.stderr ?? err.message).trim()}`);
    stdout = err.stdout;
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
 * `oasdiff breaking base revision --fail-on ERR` reports (levels ERR and WARN); `changes` is the
 * whole changelog (additive ones at level INFO).
 */
export function diffOpenApi(oasdiff, base, revision) {
  const breaking = oasdiffJson(oasdiff, ['breaking', base, revision, '--fail-on', 'ERR']);
  const changes = oasdiffJson(oasdiff, ['changelog', base, revision]);
  return { breaking, changes };
}

const ACK = /^\s*acknowledge-breaking:\s*(\S+)\s+(\S+)\s+(\S+)\s*(?:—|--|-|:)\s*(\S.*)$/;

/**
 * The acknowledgements of the changesets in `dir` (`*.md`): one per line
 * `acknowledge-breaking: <rule id> <METHOD> <path> — <why>` (`-` as METHOD for a change that is
 * not an operation's). `.changeset/README.md` (changesets' own) is not a changeset. A line that starts so but does not parse is an error, not ignored.
 */
export function readAcknowledgements(dir) {
  if (!existsSync(dir)) return { acknowledgements: [], problems: [] };
  const acknowledgements = [];
  const problems = [];
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.md'))
    .sort()) {
    readFileSync(join(dir, name), 'utf8')
      .split('\n')
      .forEach((line, index) => {
        if (!/^\s*acknowledge-breaking:/.test(line)) return;
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
  }
  return { acknowledgements, problems };
}

const acknowledges = (ack, finding) =>
  ack.id === finding.id && ack.operation === finding.operation.toUpperCase() && ack.path === finding.path;

/**
 * The verdict on a diff: `refused` = breaking changes (ERR) no acknowledgement names, `acknowledged`
 * = those one does, `warnings` = oasdiff's WARN level (listed, not refused), `additive` = the
 * changelog's INFO entries (new paths, new optional fields...). `ok` when nothing is refused and
 * every acknowledgement line parsed.
 */
export function judgeOpenApi({ breaking, changes }, { acknowledgements, problems }) {
  const errors = breaking.filter((f) => f.level === 'ERR');
  const refused = errors.filter((f) => !acknowledgements.some((ack) => acknowledges(ack, f)));
  const acknowledged = errors
    .filter((f) => !refused.includes(f))
    .map((f) => ({ ...f, why: acknowledgements.find((ack) => acknowledges(ack, f)).why }));
  const warnings = breaking.filter((f) => f.level === 'WARN');
  const additive = changes.filter((f) => f.level === 'INFO' && f.id !== 'api-version-not-bumped');
  const unused = acknowledgements.filter((ack) => !errors.some((f) => acknowledges(ack, f)));
  return { ok: refused.length === 0 && problems.length === 0, refused, acknowledged, warnings, additive, unused, problems };
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

/** The verdict as a report for people. */
export function reportOpenApi(verdict) {
  const lines = [];
  const section = (title, rows, columns = COLUMNS) => {
    if (rows.length === 0) return;
    lines.push(`${title} (${rows.length}):`, table(rows, columns).replace(/^/gm, '  '));
  };
  section('REFUSED: breaking changes without an acknowledgement', verdict.refused);
  for (const problem of verdict.problems) lines.push(`REFUSED: ${problem}`);
  section('Breaking changes acknowledged in .changeset/', verdict.acknowledged, [...COLUMNS, { key: 'why', title: 'WHY' }]);
  section('Warnings (not refused)', verdict.warnings);
  section('Additive changes', verdict.additive);
  for (const ack of verdict.unused)
    lines.push(`note: ${ack.where} acknowledges ${ack.id} ${ack.operation || '-'} ${ack.path}, which this change does not make`);
  if (verdict.refused.length > 0)
    lines.push(
      'A breaking change breaks clients of the released API. Make it additive (a new optional field, a new /v2 path),',
      'or declare it in a changeset: acknowledge-breaking: <rule id> <METHOD> <path> — <why> (docs/contracts.md).',
    );
  if (lines.length === 0) lines.push('No change to the released OpenAPI document.');
  return lines.join('\n');
}
