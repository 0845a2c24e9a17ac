import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

// The tooling (scripts/, bench/) is type-checked from its JSDoc (tsconfig.scripts.json, run by
// `npm run lint`): a script that passes a wrong type fails, and no script is left out.
const root = join(__dirname, '..', '..');
const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });

function typeCheck(project: string, extra: string[] = []) {
  const result = spawnSync(process.execPath, [tsc, '-p', project, ...extra], { cwd: root, encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Every .mjs under `dir` (node_modules and build output aside), relative to the root. */
function modulesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.mjs'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .filter((file) => !file.split('/').includes('node_modules'));
}

let scratch: string;
beforeAll(() => {
  scratch = join(root, '.dev', `script-types-${process.pid}`);
  mkdirSync(scratch, { recursive: true });
  writeFileSync(join(scratch, 'tsconfig.json'), JSON.stringify({ extends: '../../tsconfig.scripts.json', include: ['*.mjs'] }));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

test('a script that passes a wrong type fails the check, naming the line', () => {
  writeFileSync(
    join(scratch, 'wrong.mjs'),
    [
      "import { systemEnv } from '../../scripts/system-env.mjs';",
      "import { seedBookableConsultation } from '../../scripts/lib/seed.mjs';",
      '/** @type {number} */',
      "export const count = 'three';",
      'export const env = systemEnv({ url: (name) => name, mongoUrl: 27017 });',
      "export const seeded = seedBookableConsultation({ seller: async () => ({}), admin: async () => ({}) }, { ruleSet: { name: 'x' } });",
      '',
    ].join('\n'),
  );
  const { status, output } = typeCheck(scratch);
  expect(status).not.toBe(0);
  expect(output).toMatch(/wrong\.mjs\(4,14\): error TS2322: Type 'string' is not assignable to type 'number'/);
  expect(output).toMatch(/wrong\.mjs\(5,\d+\): error TS\d+:/); // systemEnv without most of its options, a number for a URL
  expect(output).toMatch(/wrong\.mjs\(6,\d+\): error TS\d+:/); // a rule set without zone and intervals, no pricing
  rmSync(join(scratch, 'wrong.mjs'));
}, 120_000);

test('a thrown value read as an Error and a value that may be missing fail the check (strict null checks, unknown in catch)', () => {
  writeFileSync(
    join(scratch, 'loose.mjs'),
    [
      "import { messageOf } from '../../scripts/lib/errors.mjs';",
      'export function first(/** @type {string[]} */ list) {',
      "  const found = list.find((item) => item.startsWith('a'));",
      '  return found.length;',
      '}',
      'export function said(/** @type {() => void} */ run) {',
      '  try {',
      '    run();',
      '  } catch (err) {',
      '    return err.message;',
      '  }',
      '  return messageOf(null);',
      '}',
      '',
    ].join('\n'),
  );
  const { status, output } = typeCheck(scratch);
  expect(status).not.toBe(0);
  expect(output).toMatch(/loose\.mjs\(4,10\): error TS18048: 'found' is possibly 'undefined'/);
  expect(output).toMatch(/loose\.mjs\(10,12\): error TS18046: 'err' is of type 'unknown'/);
  rmSync(join(scratch, 'loose.mjs'));
}, 120_000);

test('the same calls with their types right pass', () => {
  writeFileSync(
    join(scratch, 'right.mjs'),
    [
      "import { systemEnv } from '../../scripts/system-env.mjs';",
      "import { responseCaller, seedBookableConsultation } from '../../scripts/lib/seed.mjs';",
      '/** @type {number} */',
      'export const count = 3;',
      'export const env = systemEnv({',
      '  url: (name) => `http://127.0.0.1:${8080 + name.length}`,',
      "  mongoUrl: 'mongodb://127.0.0.1:27017',",
      "  amqpUrl: 'amqp://127.0.0.1',",
      "  namespace: 'types',",
      '  database: (name) => `types_${name}`,',
      "  keys: { publicKey: 'public', privateKey: 'private' },",
      "  internalToken: 'token',",
      "  admin: { email: 'admin@example.com', password: 'a password' },",
      '});',
      'const send = async () => ({ status: 200, body: { data: {} } });',
      'export const seeded = seedBookableConsultation(',
      '  { seller: responseCaller(send), admin: responseCaller(send) },',
      "  { ruleSet: { name: 'x', timezone: 'UTC', intervals: [['09:00:00', '10:00:00']] }, pricing: { basePrice: 1 }, consultation: { title: 't', duration: 5 } },",
      ');',
      '',
    ].join('\n'),
  );
  const { status, output } = typeCheck(scratch);
  expect(output).toBe('');
  expect(status).toBe(0);
  rmSync(join(scratch, 'right.mjs'));
}, 120_000);

test('every module of scripts/ and bench/ is in the check', () => {
  const { status, output } = typeCheck('tsconfig.scripts.json', ['--listFilesOnly']);
  expect(status).toBe(0);
  const checked = new Set(output.split('\n').map((line) => relative(root, line.trim())));
  const missing = [...modulesUnder('scripts'), ...modulesUnder('bench')].filter((file) => !checked.has(file));
  expect(missing).toEqual([]);
}, 120_000);
