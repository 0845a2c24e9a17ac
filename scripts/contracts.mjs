#!/usr/bin/env node
// The contract gates (docs/contracts.md), on the built contracts (run `tsc -b` first):
//   node scripts/contracts.mjs check      # exit 1 on a breaking change that is not allowed
//   node scripts/contracts.mjs snapshot   # the current contracts become the released ones (npm run release)
//   node scripts/contracts.mjs routes     # writes the schema-free route list from the endpoint table
//   ... check --json                      # one JSON document instead of the tables
// The baseline is contracts/released/ as the last release point committed it (git), never as the
// change left it: a change that edits it outside a release commit is refused. HTTP: oasdiff
// (pinned Go module, installed into .tools/go/ once) compares the released openapi.json with the
// document the gateway serves at /openapi.json; a breaking change (ERR or WARN) passes only when a
// changeset acknowledges it, one line per finding. Events: the envelope and every released
// <type>@<version> must still be readable both ways. Versions ≥ 2 need every service and kit past
// 0.1.0 (release/releases.json). Routes: the committed schema-free route list
// (packages/contracts/src/route-list.generated.ts, the gateway's proxy's) must be what the endpoint table generates.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RELEASED_DIR, openApiText, releasedBaseline, writeReleased } from './contract-gates/baseline.mjs';
import { readEventSchemas, reportEvents } from './contract-gates/events.mjs';
import { diffOpenApi, ensureOasdiff, judgeOpenApi, readAcknowledgements, reportOpenApi } from './contract-gates/http.mjs';
import { ROUTE_LIST_FILE, judgeRouteList, reportRouteList, writeRouteList } from './contract-gates/routes.mjs';
import { judgeVersionsAware, reportVersionsAware } from './contract-gates/versions.mjs';
import { messageOf } from './lib/errors.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const RELEASED = join(root, RELEASED_DIR);
const RELEASES_FILE = join(root, 'release', 'releases.json');
const log = (message) => process.stderr.write(`contracts: ${message}\n`);

/** The built contracts (packages/contracts/dist): what the gateway and the services run. */
function contracts() {
  try {
    return createRequire(import.meta.url)(join(root, 'packages', 'contracts', 'dist', 'index.js'));
  } catch (err) {
    throw new Error(`packages/contracts/dist is missing or stale: run \`pnpm exec tsc -b\` first (${messageOf(err)})`);
  }
}

/** The public OpenAPI document exactly as the gateway serves it at /openapi.json (`buildOpenApi()`). */
const currentOpenApi = () => openApiText(contracts());

/** The versions-aware rule's inputs: the registry, what each subscription reads, the last releases. */
function versionsAware(c) {
  return judgeVersionsAware({
    contracts: c.eventContractList(),
    subscriptions: c.SUBSCRIPTION_LIST.map((s) => ({
      queue: s.queue,
      reads: s.events.map((type) => ({ type, versions: c.versionsRead(s, type) })),
    })),
    releases: existsSync(RELEASES_FILE) ? JSON.parse(readFileSync(RELEASES_FILE, 'utf8')) : {},
  });
}

function check(json) {
  const dir = mkdtempSync(join(tmpdir(), 'contracts-'));
  try {
    const baseline = releasedBaseline(root, dir);
    for (const warning of baseline.warnings) log(warning);
    const current = join(dir, 'openapi.json');
    writeFileSync(current, currentOpenApi());
    const releasedOpenApi = join(baseline.dir, 'openapi.json');
    const http = existsSync(releasedOpenApi)
      ? judgeOpenApi(
          diffOpenApi(ensureOasdiff(join(root, '.tools'), log), releasedOpenApi, current),
          readAcknowledgements(join(root, '.changeset')),
        )
      : null;
    const c = contracts();
    const events = c.judgeEventContracts(readEventSchemas(join(baseline.dir, 'events')), c.releasedEventContracts());
    const versions = versionsAware(c);
    const routes = judgeRouteList(join(root, ROUTE_LIST_FILE), c.ENDPOINTS);
    const ok = baseline.problems.length === 0 && Boolean(http?.ok) && events.ok && versions.ok && routes.ok;
    const { point } = baseline;
    if (json)
      process.stdout.write(
        `${JSON.stringify({ ok, baseline: { point, drift: baseline.drift, problems: baseline.problems, warnings: baseline.warnings }, http, events, versions, routes }, null, 2)}\n`,
      );
    else
      console.log(
        [
          point
            ? `Released contracts: ${RELEASED_DIR}/ at ${point.commit.slice(0, 12)} "${point.subject}" (${point.how})`
            : `Released contracts: ${RELEASED_DIR}/ in the working tree (no git history: see the warning above)`,
          ...baseline.warnings,
          ...baseline.problems.map((problem) => `REFUSED: ${problem}`),
          '',
          'HTTP (released openapi.json → now):',
          http ? reportOpenApi(http) : 'REFUSED: no released openapi.json to compare with',
          '',
          'Events (released envelope and event schemas → now):',
          reportEvents(events),
          '',
          'Event versions:',
          reportVersionsAware(versions),
          '',
          "Route list (schema-free, the gateway proxy's):",
          reportRouteList(routes),
        ].join('\n'),
      );
    return ok;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function snapshot() {
  const count = writeReleased(RELEASED, contracts());
  console.log(`${RELEASED_DIR}: openapi.json and ${count} event schemas (the envelope and each type@version) written`);
}

/** The schema-free route list from the built endpoint table (a change to a table, then `tsc -b`, then this). */
function routes() {
  const changed = writeRouteList(join(root, ROUTE_LIST_FILE), contracts().ENDPOINTS);
  console.log(`${ROUTE_LIST_FILE}: ${changed ? 'written' : 'unchanged'} (run \`tsc -b\` again to build it)`);
}

function main() {
  const [command, ...flags] = process.argv.slice(2);
  if (command === 'check') process.exitCode = check(flags.includes('--json')) ? 0 : 1;
  else if (command === 'snapshot') snapshot();
  else if (command === 'routes') routes();
  else {
    console.error('usage: node scripts/contracts.mjs check [--json] | snapshot | routes');
    process.exitCode = 2;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
