// The event contract gate around the comparator of @mkt/contracts (judgeEventContracts): reads
// the released JSON Schemas (contracts/released/events/envelope.json for the envelope,
// <type>@<version>.json for each version's data), writes new ones, and reports. No `import.meta` here: the jest tests load this module through SWC as CommonJS.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { table } from './http.mjs';

/** `<type>@<version>` (and `envelope`) → JSON Schema, from a directory of `<name>.json` files. */
export function readEventSchemas(dir) {
  if (!existsSync(dir)) return {};
  return Object.fromEntries(
    readdirSync(dir)
      .filter((name) => name.endsWith('.json'))
      .sort()
      .map((name) => [name.slice(0, -'.json'.length), JSON.parse(readFileSync(join(dir, name), 'utf8'))]),
  );
}

/** Replaces the directory's schemas with `schemas` (one file per `type@version`, and `envelope.json`). */
export function writeEventSchemas(dir, schemas) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [contract, schema] of Object.entries(schemas))
    writeFileSync(join(dir, `${contract}.json`), `${JSON.stringify(schema, null, 2)}\n`);
}

/** The verdict of `judgeEventContracts` as a report for people. */
export function reportEvents(verdict) {
  const lines = [];
  const columns = [
    { key: 'contract', title: 'EVENT' },
    { key: 'path', title: 'FIELD' },
    { key: 'change', title: 'CHANGE' },
  ];
  if (verdict.breaking.length > 0)
    lines.push(
      `REFUSED: incompatible changes to released events (${verdict.breaking.length}):`,
      table(verdict.breaking, columns).replace(/^/gm, '  '),
      'A released type@version never changes so: add the new shape as a new version in EVENT_CONTRACTS, publish both',
      'until no consumer reads the old one (docs/contracts.md, "Event versions"). No acknowledgement exists for events.',
    );
  if (verdict.compatible.length > 0)
    lines.push(`Compatible changes (${verdict.compatible.length}):`, table(verdict.compatible, columns).replace(/^/gm, '  '));
  const added = verdict.added.filter((contract) => contract !== 'envelope');
  if (added.length > 0) lines.push(`New event versions, additive (${added.length}): ${added.join(', ')}`);
  if (added.length < verdict.added.length)
    lines.push(
      'note: the released contracts have no envelope schema (events/envelope.json) yet: the envelope is not compared; the next `npm run release` snapshots it.',
    );
  if (lines.length === 0) lines.push('No change to the released event contracts.');
  return lines.join('\n');
}
