import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as contracts from '@mkt/contracts';
import { ENVELOPE_CONTRACT, EVENT_CONTRACTS, eventContractList, eventEnvelopeJsonSchema, type JsonSchema } from '@mkt/contracts';

type Point = { commit: string; subject: string; how: string; headIsRelease: boolean };
type Baseline = {
  dir: string;
  point: Point | null;
  drift: Array<{ status: string; file: string }>;
  problems: string[];
  warnings: string[];
};
type VersionsVerdict = { ok: boolean; needed: string[]; behind: Array<{ name: string; version: string | null; last: string }> };
type Releases = Record<string, { version: string }>;
/* eslint-disable @typescript-eslint/no-require-imports -- ES modules, loaded through SWC as CommonJS (scripts/jest.config.js) */
const { releasedBaseline, writeReleased } = require('../contract-gates/baseline.mjs') as {
  releasedBaseline: (root: string, scratch: string) => Baseline;
  writeReleased: (dir: string, c: typeof contracts) => number;
};
const { readEventSchemas } = require('../contract-gates/events.mjs') as { readEventSchemas: (dir: string) => Record<string, JsonSchema> };
const { LAST_NOT_VERSIONS_AWARE, judgeVersionsAware, reportVersionsAware } = require('../contract-gates/versions.mjs') as {
  LAST_NOT_VERSIONS_AWARE: Record<string, string>;
  judgeVersionsAware: (input: {
    contracts: Array<{ type: string; version: number }>;
    subscriptions: Array<{ queue: string; reads: Array<{ type: string; versions: readonly number[] }> }>;
    releases: Releases;
  }) => VersionsVerdict;
  reportVersionsAware: (verdict: VersionsVerdict) => string;
};
/* eslint-enable @typescript-eslint/no-require-imports */

const root = join(__dirname, '..', '..');
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'contract-baseline-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

// The baseline in a throwaway git repository: contracts/released/ as the last release point
// committed it, a change that edits it outside a release commit refused.
describe('the released baseline (git)', () => {
  const git = (repo: string, ...args: string[]) =>
    execFileSync('git', ['-C', repo, '-c', 'user.name=Gate Test', '-c', 'user.email=gate@example.test', ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  const write = (repo: string, file: string, text: string) => {
    mkdirSync(join(repo, file, '..'), { recursive: true });
    writeFileSync(join(repo, file), text);
  };
  const commit = (repo: string, subject: string) => {
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '--allow-empty', '-m', subject);
    return git(repo, 'rev-parse', 'HEAD');
  };
  /** A repository whose first snapshot of contracts/released/ is its second commit (no release commit). */
  function repository() {
    const repo = join(dir, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    write(repo, 'README.md', 'a project\n');
    commit(repo, 'the start');
    write(repo, 'contracts/released/openapi.json', '{"v":1}\n');
    write(repo, 'contracts/released/events/a.b@1.json', '{"type":"object"}\n');
    const first = commit(repo, 'contract gates: the released contracts of 0.1.0');
    write(repo, 'src.ts', 'export {};\n');
    commit(repo, 'a change');
    return { repo, first };
  }
  const scratch = () => mkdtempSync(join(dir, 'scratch-'));

  test('no release commit: the commit that first added openapi.json; an untouched tree passes', () => {
    const { repo, first } = repository();
    const baseline = releasedBaseline(repo, scratch());
    expect(baseline).toMatchObject({ point: { commit: first, headIsRelease: false }, drift: [], problems: [], warnings: [] });
    expect(baseline.point!.how).toMatch(/first added contracts\/released\/openapi.json/);
    expect(readFileSync(join(baseline.dir, 'openapi.json'), 'utf8')).toBe('{"v":1}\n');
    expect(existsSync(join(baseline.dir, 'events', 'a.b@1.json'))).toBe(true);
  });

  test('a change that re-snapshots, edits, deletes or adds released files is refused; the comparison uses the release point', () => {
    const { repo } = repository();
    write(repo, 'contracts/released/openapi.json', '{"v":2}\n');
    commit(repo, 'contracts: re-snapshot');
    unlinkSync(join(repo, 'contracts/released/events/a.b@1.json'));
    write(repo, 'contracts/released/events/a.b@2.json', '{"type":"object"}\n');
    commit(repo, 'events: edit the released ones');
    write(repo, 'contracts/released/events/c.d@1.json', '{}\n');
    const baseline = releasedBaseline(repo, scratch());
    expect(baseline.drift).toEqual([
      { status: 'deleted', file: 'contracts/released/events/a.b@1.json' },
      { status: 'added', file: 'contracts/released/events/a.b@2.json' },
      { status: 'modified', file: 'contracts/released/openapi.json' },
      { status: 'added (untracked)', file: 'contracts/released/events/c.d@1.json' },
    ]);
    expect(baseline.problems).toEqual([expect.stringMatching(/differs from the last release point .*HEAD is not a release commit/s)]);
    expect(baseline.problems[0]).toMatch(/Only `npm run release` refreshes contracts\/released\//);
    expect(readFileSync(join(baseline.dir, 'openapi.json'), 'utf8')).toBe('{"v":1}\n');
    expect(readEventSchemas(join(baseline.dir, 'events'))).toEqual({ 'a.b@1': { type: 'object' } });
  });

  test('a release commit moves the baseline; HEAD being one passes, a later edit is refused', () => {
    const { repo } = repository();
    write(repo, 'contracts/released/openapi.json', '{"v":2}\n');
    const release = commit(repo, 'release: contracts@0.2.0, gateway@0.2.0');
    expect(releasedBaseline(repo, scratch())).toMatchObject({ point: { commit: release, headIsRelease: true }, problems: [] });
    commit(repo, 'after the release');
    expect(releasedBaseline(repo, scratch())).toMatchObject({ point: { commit: release, headIsRelease: false }, problems: [] });
    write(repo, 'contracts/released/openapi.json', '{"v":3}\n');
    commit(repo, 'a change that edits the released document');
    const baseline = releasedBaseline(repo, scratch());
    expect(baseline.problems).toEqual([expect.stringContaining('release: contracts@0.2.0, gateway@0.2.0')]);
    expect(readFileSync(join(baseline.dir, 'openapi.json'), 'utf8')).toBe('{"v":2}\n');
  });

  test('only a subject `npm run release` writes is a release point: "release: notes" moves nothing', () => {
    const { repo } = repository();
    write(repo, 'contracts/released/openapi.json', '{"v":2}\n');
    const release = commit(repo, 'release: contracts@0.2.0');
    write(repo, 'contracts/released/openapi.json', '{"v":3}\n');
    commit(repo, 'release: notes for the next version');
    const baseline = releasedBaseline(repo, scratch());
    expect(baseline.point).toMatchObject({ commit: release, headIsRelease: false });
    expect(baseline.problems).toEqual([expect.stringContaining('release: contracts@0.2.0')]);
  });

  test('an empty or missing events/ is refused', () => {
    const { repo } = repository();
    git(repo, 'rm', '-q', '-r', 'contracts/released/events');
    commit(repo, 'release: contracts@0.2.0');
    expect(releasedBaseline(repo, scratch()).problems).toEqual([expect.stringMatching(/has no event schemas/)]);
  });

  test('without history (no repository of its own, a shallow clone): said loudly, the working tree is compared', () => {
    const { repo } = repository();
    const shallow = join(dir, 'shallow');
    execFileSync('git', ['clone', '-q', '--depth', '1', `file://${repo}`, shallow], { stdio: 'ignore' });
    const cloned = releasedBaseline(shallow, scratch());
    expect(cloned).toMatchObject({ point: null, dir: join(shallow, 'contracts/released'), problems: [] });
    expect(cloned.warnings).toEqual([expect.stringMatching(/^WARNING: .*shallow clone.*AS THE CHANGE LEFT IT/)]);

    const plain = join(dir, 'plain');
    mkdirSync(join(plain, 'contracts', 'released'), { recursive: true });
    writeFileSync(join(plain, 'contracts', 'released', 'openapi.json'), '{}\n');
    const none = releasedBaseline(plain, scratch());
    expect(none.warnings).toEqual([expect.stringMatching(/^WARNING: .*not a git repository/)]);
    expect(none.problems).toEqual([expect.stringMatching(/contracts\/released has no event schemas/)]);

    const inside = join(repo, 'contracts');
    expect(releasedBaseline(inside, scratch()).warnings).toEqual([expect.stringMatching(/not a git repository of its own/)]);
  });
});

describe('snapshot', () => {
  test('writes the envelope beside the data schemas, generated the same way', () => {
    const count = writeReleased(dir, contracts);
    const schemas = readEventSchemas(join(dir, 'events'));
    expect(count).toBe(eventContractList().length + 1);
    expect(existsSync(join(dir, 'events', 'envelope.json'))).toBe(true);
    expect(schemas[ENVELOPE_CONTRACT]).toEqual(eventEnvelopeJsonSchema());
    expect(JSON.parse(readFileSync(join(dir, 'openapi.json'), 'utf8'))).toEqual(contracts.buildOpenApi());
    // … and the gate compares it: a removed envelope field is refused.
    const without = contracts.eventJsonSchema(contracts.EventEnvelope.omit({ source: true }));
    const verdict = contracts.judgeEventContracts(schemas, { ...contracts.releasedEventContracts(), [ENVELOPE_CONTRACT]: without });
    expect(verdict.breaking).toEqual([expect.objectContaining({ contract: ENVELOPE_CONTRACT, path: '/source' })]);
  });
});

describe('versions ≥ 2 need every service and kit past 0.1.0', () => {
  const released = JSON.parse(readFileSync(join(root, 'release', 'releases.json'), 'utf8')) as Releases;
  const subscriptions = contracts.SUBSCRIPTION_LIST.map((s) => ({
    queue: s.queue,
    reads: s.events.map((type) => ({ type, versions: contracts.versionsRead(s, type) })),
  }));
  const withV2 = eventContractList({
    ...EVENT_CONTRACTS,
    'consultation.booking.cancelled': { 1: contracts.BookingCancelledData, 2: contracts.BookingCancelledData },
  });
  const past = (version: string): Releases => Object.fromEntries(Object.keys(LAST_NOT_VERSIONS_AWARE).map((name) => [name, { version }]));

  test('the platform as released (release/releases.json) accepts a version 2: every service and kit is past 0.1.0', () => {
    expect(judgeVersionsAware({ contracts: withV2, subscriptions, releases: released })).toMatchObject({ ok: true, behind: [] });
  });

  test('the platform as it is: version 1 only, nothing needed', () => {
    expect(judgeVersionsAware({ contracts: eventContractList(), subscriptions, releases: released })).toEqual({
      ok: true,
      needed: [],
      behind: [],
    });
  });

  test('a version 2 in the registry while the releases are 0.1.0 is refused, naming each one behind', () => {
    const verdict = judgeVersionsAware({ contracts: withV2, subscriptions, releases: past('0.1.0') });
    expect(verdict.ok).toBe(false);
    expect(verdict.needed).toEqual(['EVENT_CONTRACTS has consultation.booking.cancelled@2']);
    expect(verdict.behind.map((b) => `${b.name} ${b.version}`).sort()).toEqual(
      ['catalog', 'consultation', 'crm', 'gateway', 'kit', 'review', 'wallet'].map((name) => `${name} 0.1.0`),
    );
    expect(reportVersionsAware(verdict)).toMatch(/^REFUSED: versions ≥ 2 before every service and kit is versions-aware/);
  });

  test('a subscription reading version 2 is refused the same way; one name left behind (or missing) is enough', () => {
    const reading = [{ queue: 'crm.bookings', reads: [{ type: 'consultation.booking.cancelled', versions: [1, 2] }] }];
    const verdict = judgeVersionsAware({
      contracts: eventContractList(),
      subscriptions: reading,
      releases: { ...past('0.2.0'), wallet: { version: '0.1.0' } },
    });
    expect(verdict).toMatchObject({ ok: false, needed: ['the subscription crm.bookings reads consultation.booking.cancelled@2'] });
    expect(verdict.behind).toEqual([{ name: 'wallet', version: '0.1.0', last: '0.1.0' }]);
    const { kit: _kit, ...withoutKit } = past('0.2.0');
    expect(judgeVersionsAware({ contracts: withV2, subscriptions, releases: withoutKit }).behind).toEqual([
      { name: 'kit', version: null, last: '0.1.0' },
    ]);
  });

  test('every service and kit released past 0.1.0: version 2 passes', () => {
    expect(judgeVersionsAware({ contracts: withV2, subscriptions, releases: past('0.1.1') })).toMatchObject({ ok: true, behind: [] });
    expect(judgeVersionsAware({ contracts: withV2, subscriptions, releases: past('0.1.0-rc.1') }).ok).toBe(false);
  });
});

describe('node scripts/contracts.mjs check (this repository)', () => {
  test('passes, against the release point, with the versions rule', () => {
    const out = execFileSync(process.execPath, [join(root, 'scripts', 'contracts.mjs'), 'check', '--json'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const verdict = JSON.parse(out) as { ok: boolean; baseline: { problems: string[] }; versions: VersionsVerdict };
    expect(verdict).toMatchObject({ ok: true, baseline: { problems: [] }, versions: { ok: true, needed: [] } });
  }, 120_000);
});
