#!/usr/bin/env node
// `npm run fuzz [-- <schemathesis options>]`: property-based tests of the running system
// (`npm start`) from its own OpenAPI document, with every check schemathesis has, responses
// validated against the documented schemas. Installs schemathesis from PyPI into a venv under
// .tools/ on first use; signs a new seller up to get a bearer token.
//
//   FUZZ_URL       the gateway (default http://localhost:8080)
//   FUZZ_EXAMPLES  test cases per operation (default 25)
//   FUZZ_CHECKS    schemathesis checks (default all)
// Anything after `--` goes to `schemathesis run` as it is (e.g. --max-examples 5, --include-tag wallet).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SCHEMATHESIS = 'schemathesis==4.32.5';
const venv = join(root, '.tools', 'schemathesis');
const bin = join(venv, process.platform === 'win32' ? 'Scripts' : 'bin');
const base = (process.env.FUZZ_URL ?? 'http://localhost:8080').replace(/\/+$/, '');
const examples = process.env.FUZZ_EXAMPLES ?? '25';
const checks = process.env.FUZZ_CHECKS ?? 'all';

const say = (message) => console.log(`[fuzz] ${message}`);
function run(command, args) {
  const result = spawnSync(command, args, { stdio: 'inherit', cwd: root });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function installSchemathesis() {
  const python = ['python3', 'python'].find((name) => spawnSync(name, ['--version']).status === 0);
  if (!python) throw new Error('schemathesis needs Python 3.9+ (python3) with the venv module');
  if (!existsSync(join(bin, 'schemathesis'))) {
    mkdirSync(join(root, '.tools'), { recursive: true });
    say(`installing ${SCHEMATHESIS} into .tools/schemathesis`);
    if (run(python, ['-m', 'venv', venv]) !== 0) throw new Error(`${python} -m venv failed (on Debian: apt-get install python3-venv)`);
  }
  const installed = spawnSync(join(bin, 'python'), ['-m', 'pip', 'show', 'schemathesis'], { encoding: 'utf8' });
  if (!installed.stdout?.includes(`Version: ${SCHEMATHESIS.split('==')[1]}`)) {
    if (run(join(bin, 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', SCHEMATHESIS]) !== 0)
      throw new Error(`pip install ${SCHEMATHESIS} failed`);
  }
}

async function sellerToken() {
  const ready = await fetch(`${base}/openapi.json`).catch(() => null);
  if (!ready?.ok) throw new Error(`nothing answers ${base}/openapi.json: start the system first (npm start)`);
  const email = `fuzz-seller-${randomBytes(6).toString('hex')}@example.com`;
  const res = await fetch(`${base}/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: randomBytes(12).toString('hex'), fullName: 'Fuzz Seller', role: 'seller' }),
  });
  const body = await res.json().catch(() => null);
  if (res.status !== 200 || !body?.data?.accessToken) throw new Error(`registering a seller: ${res.status} ${JSON.stringify(body)}`);
  say(`signed up ${email}`);
  return body.data.accessToken;
}

try {
  installSchemathesis();
  const token = await sellerToken();
  const args = [
    '--config-file',
    join(root, 'scripts', 'fuzz.toml'),
    'run',
    `${base}/openapi.json`,
    '--url',
    base,
    '--checks',
    checks,
    '--max-examples',
    examples,
    '--header',
    `Authorization: Bearer ${token}`,
    '--no-color',
    ...process.argv.slice(2),
  ];
  say(`schemathesis ${args.filter((arg) => !arg.startsWith('Authorization')).join(' ')}`);
  process.exit(run(join(bin, 'schemathesis'), args));
} catch (err) {
  console.error(`[fuzz] ${err instanceof Error ? err.message : err}`);
  process.exit(2);
}
