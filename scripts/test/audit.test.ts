import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type Finding = { id: string; aliases: string[]; package: string; version: string; severity: string; summary: string };
type Ack = { id?: string; package?: string; reason?: string; until?: string };
const { acknowledged, acknowledgementProblems, affects, compareVersions, lockedPackages, osvFindings, pnpmAuditFindings } =
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- an ES module, loaded through SWC as CommonJS (scripts/jest.config.js)
  require('../lib/audit.mjs') as {
    acknowledged: (finding: Finding, acks: Ack[], today?: string) => boolean;
    acknowledgementProblems: (acks: unknown) => string[];
    affects: (entry: unknown, version: string) => boolean;
    compareVersions: (a: string, b: string) => number;
    lockedPackages: (text: string) => { name: string; version: string }[];
    osvFindings: (records: unknown[], packages: { name: string; version: string }[]) => Finding[];
    pnpmAuditFindings: (report: unknown) => Finding[];
  };

// The dependency audit (scripts/audit.mjs): a locked package an advisory affects fails it unless
// an acknowledgement with a reason covers it.
const root = join(__dirname, '..', '..');

const LOCK = [
  "lockfileVersion: '9.0'",
  '',
  'importers:',
  '  .:',
  '    dependencies:',
  '      lodash:',
  '        specifier: 4.17.20',
  '        version: 4.17.20',
  '',
  'packages:',
  '',
  '  lodash@4.17.20:',
  '    resolution: {integrity: sha512-x}',
  '',
  "  '@scope/tool@1.0.0-beta.2':",
  '    resolution: {integrity: sha512-y}',
  '',
  '  minimist@1.2.8:',
  '    resolution: {integrity: sha512-z}',
  '',
  'snapshots:',
  '',
  '  lodash@4.17.20: {}',
  '',
].join('\n');

describe('the audit rules', () => {
  test('the lockfile’s packages, scoped and pre-release ones too', () => {
    expect(lockedPackages(LOCK)).toEqual([
      { name: 'lodash', version: '4.17.20' },
      { name: '@scope/tool', version: '1.0.0-beta.2' },
      { name: 'minimist', version: '1.2.8' },
    ]);
  });

  test('versions compare as semver: numbers, then a pre-release before its release', () => {
    expect(compareVersions('4.17.20', '4.17.21')).toBe(-1);
    expect(compareVersions('4.10.0', '4.9.0')).toBe(1);
    expect(compareVersions('1.0.0-beta.2', '1.0.0')).toBe(-1);
    expect(compareVersions('1.2.3', '1.2.3')).toBe(0);
  });

  test('OSV ranges: introduced includes, fixed excludes, last_affected includes, several intervals', () => {
    const entry = {
      ranges: [
        { type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '0.2.4' }, { introduced: '1.0.0' }, { last_affected: '1.2.5' }] },
      ],
    };
    expect(affects(entry, '0.0.1')).toBe(true);
    expect(affects(entry, '0.2.4')).toBe(false);
    expect(affects(entry, '1.0.0')).toBe(true);
    expect(affects(entry, '1.2.5')).toBe(true);
    expect(affects(entry, '1.2.6')).toBe(false);
    expect(affects({ versions: ['2.0.0'] }, '2.0.0')).toBe(true);
  });

  test('findings of OSV records and of pnpm audit’s answer', () => {
    const record = {
      id: 'GHSA-35jh-r3h4-6jhm',
      aliases: ['CVE-2021-23337'],
      summary: 'Command Injection in lodash',
      affected: [
        {
          package: { ecosystem: 'npm', name: 'lodash' },
          ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '4.17.21' }] }],
        },
      ],
    };
    expect(osvFindings([record], lockedPackages(LOCK))).toEqual([
      {
        id: 'GHSA-35jh-r3h4-6jhm',
        aliases: ['CVE-2021-23337'],
        package: 'lodash',
        version: '4.17.20',
        severity: 'UNKNOWN',
        summary: 'Command Injection in lodash',
      },
    ]);
    expect(osvFindings([{ ...record, withdrawn: '2024-01-01' }], lockedPackages(LOCK))).toEqual([]);
    expect(
      pnpmAuditFindings({
        advisories: {
          1: {
            id: 1,
            github_advisory_id: 'GHSA-1',
            module_name: 'x',
            severity: 'high',
            title: 't',
            cves: [],
            findings: [{ version: '1.0.0' }, { version: '1.0.0' }],
          },
        },
      }),
    ).toEqual([{ id: 'GHSA-1', aliases: [], package: 'x', version: '1.0.0', severity: 'HIGH', summary: 't' }]);
  });

  test('an acknowledgement needs an id, the package and a reason; until is its last day', () => {
    const finding = { id: 'GHSA-1', aliases: ['CVE-1'], package: 'x', version: '1.0.0', severity: 'HIGH', summary: '' };
    const ack = { id: 'GHSA-1', package: 'x', reason: 'not reachable: only the build uses it' };
    expect(acknowledgementProblems([ack])).toEqual([]);
    expect(acknowledged(finding, [ack])).toBe(true);
    expect(acknowledged(finding, [{ ...ack, id: 'CVE-1' }])).toBe(true);
    expect(acknowledged(finding, [{ ...ack, package: 'y' }])).toBe(false);
    expect(acknowledged(finding, [{ ...ack, reason: '' }])).toBe(false);
    expect(acknowledgementProblems([{ ...ack, reason: '' }])).toEqual([
      'acknowledgement 1 (GHSA-1): no reason (a sentence saying why it is accepted)',
    ]);
    expect(acknowledged(finding, [{ ...ack, until: '2026-01-31' }], '2026-01-31')).toBe(true);
    expect(acknowledged(finding, [{ ...ack, until: '2026-01-31' }], '2026-02-01')).toBe(false);
  });
});

describe('npm run audit', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mkt-audit-'));
    writeFileSync(join(dir, 'pnpm-lock.yaml'), LOCK);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const audit = (acks: unknown) => {
    writeFileSync(join(dir, 'acks.json'), JSON.stringify(acks));
    // The project's OSV records (security/osv/); the npm audit endpoint is not asked (it may not answer here).
    return spawnSync(
      process.execPath,
      [join(root, 'scripts/audit.mjs'), '--no-pnpm', '--lockfile', join(dir, 'pnpm-lock.yaml'), '--acknowledged', join(dir, 'acks.json')],
      { encoding: 'utf8' },
    );
  };

  test('a known-vulnerable dependency (lodash 4.17.20) fails it', () => {
    const result = audit([]);
    expect(result.stdout).toContain('VULNERABLE   lodash@4.17.20 GHSA-35jh-r3h4-6jhm');
    expect(result.stdout).not.toContain('minimist@1.2.8');
    expect(result.status).toBe(1);
  });

  test('acknowledged with a reason, it passes; without a reason, it still fails', () => {
    const ack = { id: 'GHSA-35jh-r3h4-6jhm', package: 'lodash', reason: 'templates are never built from user input' };
    const passing = audit([ack]);
    expect(passing.stdout).toContain('acknowledged lodash@4.17.20 GHSA-35jh-r3h4-6jhm');
    expect(passing.status).toBe(0);
    const noReason = audit([{ ...ack, reason: '' }]);
    expect(noReason.stdout).toContain('INVALID');
    expect(noReason.status).toBe(1);
  });

  test('the project’s own lockfile passes with its acknowledgements', () => {
    const result = spawnSync(process.execPath, [join(root, 'scripts/audit.mjs'), '--no-pnpm'], { encoding: 'utf8' });
    expect(result.stdout).toMatch(/\d+ findings, 0 not acknowledged/);
    expect(result.status).toBe(0);
  });
});
