#!/usr/bin/env node
// The two contract gates (docs/contracts.md), on the built contracts (run `tsc -b` first):
//   node scripts/contracts.mjs check      # exit 1 on a breaking change that is not allowed
//   node scripts/contracts.mjs snapshot   # the current contracts become the released ones
//   ... check --json                      # one JSON document instead of the tables
// HTTP: oasdiff (pinned Go module, installed into .tools/go/ once) compares
// contracts/released/openapi.json with the document the gateway serves at /openapi.json; a
// breaking change passes only when a changeset acknowledges it. Events: every released
// contracts/released/events/<type>@<version>.json must still be readable both ways.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readEventSchemas, reportEvents, writeEventSchemas } from './contract-gates/events.mjs';
import { diffOpenApi, ensureOasdiff, judgeOpenApi, readAcknowledgements, reportOpenApi } from './contract-gates/http.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const RELEASED = join(root, 'contracts', 'released');
const log = (message) => process.stderr.write(`contracts: ${message}\n`);

/** The built contracts (packages/contracts/dist): what the gateway and the services run. */
function contracts() {
  try {
    return createRequire(import.meta.url)(join(root, 'packages', 'contracts', 'dist', 'index.js'));
  } catch (err) {
    throw new Error(`packages/contracts/dist is missing or stale: run \`pnpm exec tsc -b\` first (${err.message})`);
  }
}

/** The public OpenAPI document exactly as the gateway serves it at /openapi.json (`buildOpenApi()`). */
const currentOpenApi = () => `${JSON.stringify(contracts().buildOpenApi(), null, 2)}\n`;

function check(json) {
  const dir = mkdtempSync(join(tmpdir(), 'contracts-'));
  try {
    const current = join(dir, 'openapi.json');
    writeFileSync(current, currentOpenApi());
    const oasdiff = ensureOasdiff(join(root, '.tools'), log);
    const http = judgeOpenApi(
      diffOpenApi(oasdiff, join(RELEASED, 'openapi.json'), current),
      readAcknowledgements(join(root, '.changeset')),
    );
    const c = contracts();
    const events = c.judgeEventContracts(readEventSchemas(join(RELEASED, 'events')), c.eventJsonSchemas());
    if (json) process.stdout.write(`${JSON.stringify({ ok: http.ok && events.ok, http, events }, null, 2)}\n`);
    else
      console.log(
        [
          'HTTP (contracts/released/openapi.json → now):',
          reportOpenApi(http),
          '',
          'Events (contracts/released/events → now):',
          reportEvents(events),
        ].join('\n'),
      );
    return http.ok && events.ok;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function snapshot() {
  writeFileSync(join(RELEASED, 'openapi.json'), currentOpenApi());
  const schemas = contracts().eventJsonSchemas();
  writeEventSchemas(join(RELEASED, 'events'), schemas);
  console.log(`contracts/released: openapi.json and ${Object.keys(schemas).length} event schemas written`);
}

function main() {
  const [command, ...flags] = process.argv.slice(2);
  if (command === 'check') process.exitCode = check(flags.includes('--json')) ? 0 : 1;
  else if (command === 'snapshot') snapshot();
  else {
    console.error('usage: node scripts/contracts.mjs check [--json] | snapshot');
    process.exitCode = 2;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
