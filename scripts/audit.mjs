#!/usr/bin/env node
// `npm run audit`: the locked dependencies (pnpm-lock.yaml) against the vulnerability advisories
// that can be had (docs/releasing.md "Dependency audit"):
//   - `pnpm audit`'s answer, when the npm registry's audit endpoint answers (it does not on every
//     machine: where it refuses, that is said and the audit goes on with the others);
//   - the OSV records (osv.dev's format) in security/osv/, and in $OSV_DB when set (a folder of
//     OSV JSON files, e.g. osv.dev's npm export unpacked where it can be downloaded).
// A finding fails the audit unless security/audit-acknowledged.json acknowledges it with a reason
// (and, when given, an `until` date not past). An acknowledgement without a reason fails it too.
//
//   node scripts/audit.mjs [--lockfile FILE] [--acknowledged FILE] [--osv DIR]… [--no-pnpm]
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { acknowledged, acknowledgementProblems, lockedPackages, osvFindings, pnpmAuditFindings } from './lib/audit.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const option = (name) => argv.flatMap((arg, i) => (argv[i - 1] === name ? [arg] : []));
const lockfile = option('--lockfile')[0] ?? join(root, 'pnpm-lock.yaml');
const acknowledgedFile = option('--acknowledged')[0] ?? join(root, 'security', 'audit-acknowledged.json');
const osvDirs = [
  ...(option('--osv').length ? option('--osv') : [join(root, 'security', 'osv')]),
  ...(process.env.OSV_DB ? [process.env.OSV_DB] : []),
];
const say = (line) => console.log(`[audit] ${line}`);

function readOsv(dir) {
  if (!existsSync(dir)) throw new Error(`${dir}: no such folder of OSV records`);
  return readdirSync(dir, { recursive: true })
    .filter((file) => String(file).endsWith('.json'))
    .map((file) => JSON.parse(readFileSync(join(dir, String(file)), 'utf8')));
}

/** `pnpm audit --json` through the project's pnpm; null (and why) when the endpoint does not answer. */
function pnpmAudit() {
  if (argv.includes('--no-pnpm')) return { findings: null, why: 'not asked (--no-pnpm)' };
  if (!toolchain) return { findings: null, why: 'not asked (--no-pnpm)' };
  const { pnpm, toolEnv } = toolchain;
  const result = spawnSync(pnpm(), ['audit', '--json'], { cwd: root, env: toolEnv(), encoding: 'utf8', timeout: 120_000 });
  let report;
  try {
    report = JSON.parse(result.stdout);
  } catch {
    return {
      findings: null,
      why: `no JSON answer (exit ${result.status}): ${(result.stderr || result.stdout || '').trim().slice(0, 200)}`,
    };
  }
  if (report.error) return { findings: null, why: `${report.error.code}: ${report.error.message.slice(0, 300)}` };
  return { findings: pnpmAuditFindings(report), why: 'answered' };
}

const toolchain = argv.includes('--no-pnpm') ? null : await import('./lib/toolchain.mjs');
const packages = lockedPackages(readFileSync(lockfile, 'utf8'));
const records = osvDirs.flatMap(readOsv);
const acks = existsSync(acknowledgedFile) ? JSON.parse(readFileSync(acknowledgedFile, 'utf8')) : [];
const problems = acknowledgementProblems(acks);
const pnpmResult = pnpmAudit();
say(`${packages.length} locked packages; ${records.length} OSV records (${osvDirs.map((d) => d.replace(`${root}/`, '')).join(', ')})`);
say(`pnpm audit: ${pnpmResult.why}`);
const findings = [...osvFindings(records, packages)];
for (const finding of pnpmResult.findings ?? [])
  if (
    !findings.some(
      (f) => (f.id === finding.id || f.aliases.includes(finding.id)) && f.package === finding.package && f.version === finding.version,
    )
  )
    findings.push(finding);
let failing = 0;
for (const finding of findings) {
  const ok = acknowledged(finding, problems.length ? [] : acks);
  if (!ok) failing += 1;
  say(
    `${ok ? 'acknowledged' : 'VULNERABLE  '} ${finding.package}@${finding.version} ${finding.id} ${finding.severity}: ${finding.summary}`,
  );
}
for (const problem of problems) say(`INVALID ${acknowledgedFile.replace(`${root}/`, '')}: ${problem}`);
const stale = acks.filter((ack) => !findings.some((f) => (f.id === ack.id || f.aliases.includes(ack.id)) && f.package === ack.package));
for (const ack of stale) say(`note: ${ack.id} (${ack.package}) is acknowledged but no locked package is affected: the line can go`);
say(`${findings.length} findings, ${failing} not acknowledged${problems.length ? `, ${problems.length} invalid acknowledgements` : ''}`);
process.exit(failing > 0 || problems.length > 0 ? 1 : 0);
