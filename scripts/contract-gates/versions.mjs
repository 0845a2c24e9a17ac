// The precondition of event versions ≥ 2 (docs/contracts.md, "Before the first version 2"):
// releases up to 0.1.0 (c80c987) route and parse events by type only. Every service declares every
// subscription when it connects, so a `<type>.v2` binding on a shared queue would hand v2 copies to
// 0.1.0 pods of that queue's consumer, and a 0.1.0 relay sweeping an outbox holding a v2 would
// publish it under the bare type: 0.1.0 code would read a shape it does not know. So no version ≥ 2
// exists until every service and kit has been released past its last release that is not
// versions-aware.
// No `import.meta` here: the jest tests load this module through SWC as CommonJS.

/** Per name: its last release that routes and parses events by type only (not versions-aware). */
export const LAST_NOT_VERSIONS_AWARE = Object.freeze({
  gateway: '0.1.0',
  wallet: '0.1.0',
  catalog: '0.1.0',
  crm: '0.1.0',
  consultation: '0.1.0',
  review: '0.1.0',
  kit: '0.1.0',
});

/** -1, 0 or 1 as semver `a` is before, the same as or after `b` (a pre-release comes before its release). */
export function compareVersions(a, b) {
  const parse = (v) => {
    const match = /^(\d+)\.(\d+)\.(\d+)(-.+)?$/.exec(String(v));
    if (!match) throw new Error(`not a version: ${JSON.stringify(v)}`);
    return [Number(match[1]), Number(match[2]), Number(match[3]), match[4] ? 0 : 1];
  };
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < x.length; i += 1) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

/**
 * `contracts`: every `{ type, version }` of the registry; `subscriptions`: `{ queue, reads: [{ type,
 * versions }] }`; `releases`: release/releases.json (`{ name: { version } }`).
 * → { ok, needed: why versions-aware releases are needed ([] when no version ≥ 2 exists), behind:
 * the names whose last release is not past LAST_NOT_VERSIONS_AWARE }
 */
export function judgeVersionsAware({ contracts, subscriptions, releases }) {
  const needed = [
    ...contracts.filter(({ version }) => version >= 2).map(({ type, version }) => `EVENT_CONTRACTS has ${type}@${version}`),
    ...subscriptions.flatMap(({ queue, reads }) =>
      reads.flatMap(({ type, versions }) =>
        versions.filter((version) => version >= 2).map((version) => `the subscription ${queue} reads ${type}@${version}`),
      ),
    ),
  ];
  if (needed.length === 0) return { ok: true, needed, behind: [] };
  const behind = Object.entries(LAST_NOT_VERSIONS_AWARE)
    .map(([name, last]) => ({ name, last, version: releases?.[name]?.version ?? null }))
    .filter(({ version, last }) => version === null || compareVersions(version, last) <= 0);
  return { ok: behind.length === 0, needed, behind };
}

/** The verdict as a report for people. */
export function reportVersionsAware({ ok, needed, behind }) {
  if (needed.length === 0) return 'Every event is version 1: no versions-aware release needed.';
  if (ok) return `Versions ≥ 2 (${needed.join('; ')}): every service and kit is released past its last release that is not versions-aware.`;
  return [
    `REFUSED: versions ≥ 2 before every service and kit is versions-aware (${needed.join('; ')}).`,
    ...behind.map(
      ({ name, version, last }) =>
        `  ${name}: last release ${version ?? '(none in release/releases.json)'}, must be past ${last} (routes and parses events by type only)`,
    ),
    'A 0.1.0 pod on a queue bound to <type>.v2 (every service declares every subscription when it connects), or a 0.1.0',
    'relay sweeping an outbox that holds a v2, hands 0.1.0 code a shape it cannot read. Release every service and kit',
    'first (`npm run release` after a change to @mkt/kit bumps them all), then add version 2 (docs/contracts.md).',
  ].join('\n');
}
