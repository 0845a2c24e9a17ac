// The dependency audit's rules (scripts/audit.mjs): which locked packages an advisory affects,
// and which findings an acknowledgement covers. Pure functions; no `import.meta` (the jest tests
// load this module through SWC as CommonJS).

/** `name@version` of every package pnpm-lock.yaml (lockfile v9) locks, once each. */
export function lockedPackages(lockfileText) {
  const found = new Map();
  let inPackages = false;
  for (const line of lockfileText.split('\n')) {
    if (/^\S/.test(line)) inPackages = line.startsWith('packages:');
    if (!inPackages) continue;
    const match = /^ {2}'?((?:@[^@/\s']+\/)?[^@\s'(]+)@([^('":\s]+)/.exec(line);
    if (match) found.set(`${match[1]}@${match[2]}`, { name: match[1], version: match[2] });
  }
  return [...found.values()];
}

/** Semantic version order (major.minor.patch, then a pre-release sorts before its release). */
export function compareVersions(a, b) {
  const parse = (v) => {
    const [core, pre] = String(v).replace(/^v/, '').split('+')[0].split(/-(.*)/s);
    return { nums: core.split('.').map((n) => Number(n) || 0), pre: pre ?? null };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i += 1) if ((x.nums[i] ?? 0) !== (y.nums[i] ?? 0)) return (x.nums[i] ?? 0) < (y.nums[i] ?? 0) ? -1 : 1;
  if (x.pre === y.pre) return 0;
  if (x.pre === null) return 1;
  if (y.pre === null) return -1;
  return x.pre < y.pre ? -1 : 1;
}

/** Whether an OSV `affected` entry's ranges (SEMVER/ECOSYSTEM events) or versions list hold `version`. */
export function affects(entry, version) {
  if ((entry.versions ?? []).includes(version)) return true;
  for (const range of entry.ranges ?? []) {
    if (range.type !== 'SEMVER' && range.type !== 'ECOSYSTEM') continue;
    // Events in order: an `introduced` opens an interval, a `fixed` (excluded) or
    // `last_affected` (included) closes it.
    const events = [...range.events].sort((p, q) => compareVersions(Object.values(p)[0], Object.values(q)[0]));
    let affected = false;
    for (const event of events) {
      if (event.introduced !== undefined && compareVersions(version, event.introduced === '0' ? '0.0.0-0' : event.introduced) >= 0)
        affected = true;
      else if (event.fixed !== undefined && compareVersions(version, event.fixed) >= 0) affected = false;
      else if (event.last_affected !== undefined && compareVersions(version, event.last_affected) > 0) affected = false;
    }
    if (affected) return true;
  }
  return false;
}

/** Findings `{ id, aliases, package, version, severity, summary }` of OSV records against the locked packages. */
export function osvFindings(records, packages) {
  const byName = new Map();
  for (const pkg of packages) byName.set(pkg.name, [...(byName.get(pkg.name) ?? []), pkg.version]);
  const findings = [];
  for (const record of records) {
    if (record.withdrawn) continue;
    for (const entry of record.affected ?? []) {
      if (entry.package?.ecosystem !== 'npm') continue;
      for (const version of byName.get(entry.package.name) ?? [])
        if (
          affects(entry, version) &&
          !findings.some((f) => f.id === record.id && f.package === entry.package.name && f.version === version)
        )
          findings.push({
            id: record.id,
            aliases: record.aliases ?? [],
            package: entry.package.name,
            version,
            severity: record.database_specific?.severity ?? 'UNKNOWN',
            summary: record.summary ?? '',
          });
    }
  }
  return findings;
}

/** Findings of `pnpm audit --json`'s answer (its advisories, one finding per version found). */
export function pnpmAuditFindings(report) {
  return Object.values(report.advisories ?? {}).flatMap((advisory) =>
    [...new Set((advisory.findings ?? []).map((f) => f.version))].map((version) => ({
      id: advisory.github_advisory_id ?? String(advisory.id),
      aliases: advisory.cves ?? [],
      package: advisory.module_name,
      version,
      severity: String(advisory.severity ?? 'unknown').toUpperCase(),
      summary: advisory.title ?? '',
    })),
  );
}

/**
 * Checks the acknowledgements (`[{ id, package, reason, until? }]`): each needs an advisory id, a
 * package and a reason; `until` (YYYY-MM-DD), when given, is the last day it holds. Returns the
 * problems found, each a sentence.
 */
export function acknowledgementProblems(acknowledgements) {
  if (!Array.isArray(acknowledgements)) return ['the acknowledgements are not a JSON array'];
  const problems = [];
  for (const [index, ack] of acknowledgements.entries()) {
    const where = `acknowledgement ${index + 1}${ack?.id ? ` (${ack.id})` : ''}`;
    if (typeof ack?.id !== 'string' || !ack.id.trim()) problems.push(`${where}: no advisory id`);
    if (typeof ack?.package !== 'string' || !ack.package.trim()) problems.push(`${where}: no package`);
    if (typeof ack?.reason !== 'string' || ack.reason.trim().length < 10)
      problems.push(`${where}: no reason (a sentence saying why it is accepted)`);
    if (ack?.until !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(ack.until)) problems.push(`${where}: until is not YYYY-MM-DD`);
  }
  return problems;
}

/** Whether a valid, unexpired acknowledgement covers the finding (by advisory id or alias, and package). */
export function acknowledged(finding, acknowledgements, today = new Date().toISOString().slice(0, 10)) {
  return acknowledgements.some(
    (ack) =>
      acknowledgementProblems([ack]).length === 0 &&
      (ack.id === finding.id || finding.aliases.includes(ack.id)) &&
      ack.package === finding.package &&
      (ack.until === undefined || ack.until >= today),
  );
}
