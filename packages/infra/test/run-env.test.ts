import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workspaceRoot } from '../src/mongo';

// `node scripts/run.mjs env > .env` is read by docker compose: run from a copy of the script in
// a folder of its own, so the development key pair it generates lands there, not in the repository.
const copy = mkdtempSync(join(tmpdir(), 'run-env-'));
mkdirSync(join(copy, 'scripts/lib'), { recursive: true });
copyFileSync(join(workspaceRoot(), 'scripts/run.mjs'), join(copy, 'scripts/run.mjs'));
copyFileSync(join(workspaceRoot(), 'scripts/lib/toolchain.mjs'), join(copy, 'scripts/lib/toolchain.mjs'));
copyFileSync(join(workspaceRoot(), 'scripts/lib/errors.mjs'), join(copy, 'scripts/lib/errors.mjs'));
copyFileSync(join(workspaceRoot(), 'package.json'), join(copy, 'package.json'));
// On the Node that runs the tests, whichever it is (run-node.test.ts tests the choice).
writeFileSync(join(copy, '.node-version'), process.versions.node);
afterAll(() => rmSync(copy, { recursive: true, force: true }));

function runEnv(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.JWT_PRIVATE_KEY;
  delete env.JWT_PUBLIC_KEY;
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [join(copy, 'scripts/run.mjs'), 'env', ...args], { env, timeout: 30_000 }, (err, stdout, stderr) =>
      err ? reject(err) : resolve({ stdout, stderr }),
    ),
  );
}

/** What compose makes of the file: KEY=value lines, nothing else. */
function parseEnvFile(text: string): Map<string, string> {
  const lines = text.split('\n').filter(Boolean);
  for (const line of lines) expect(line).toMatch(/^[A-Z][A-Z0-9_]*=\S/);
  return new Map(lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

describe('node scripts/run.mjs env (the .env of docker compose)', () => {
  test('only KEY=value lines on stdout, its own lines on stderr, and no sandbox payments unless asked for', async () => {
    const { stdout, stderr } = await runEnv();
    const env = parseEnvFile(stdout);
    expect([...env.keys()].sort()).toEqual([
      'ADMIN_PASSWORD',
      ...['CATALOG', 'CONSULTATION', 'CRM', 'GATEWAY', 'REVIEW', 'WALLET'].map((name) => `AMQP_PASSWORD_${name}`),
      'INTERNAL_API_TOKEN',
      'JWT_PRIVATE_KEY',
      'JWT_PUBLIC_KEY',
      ...['CATALOG', 'CONSULTATION', 'CRM', 'GATEWAY', 'REVIEW', 'WALLET'].map((name) => `MONGO_PASSWORD_${name}`),
      'MONGO_ROOT_PASSWORD',
      'RABBITMQ_ADMIN_PASSWORD',
    ]);
    expect(env.has('ALLOW_SANDBOX_PAYMENTS')).toBe(false);
    expect(env.has('PAYMENT_PROVIDER')).toBe(false);
    // A fresh clone generates its key pair: that line used to land in .env and break compose.
    expect(existsSync(join(copy, '.dev/keys/jwt-private.pem'))).toBe(true);
    expect(stderr).toContain('[run] generating a development RS256 key pair');
    expect(stderr).toContain('--sandbox-payments');
    expect(JSON.parse(env.get('JWT_PUBLIC_KEY')!)).toBe(readFileSync(join(copy, '.dev/keys/jwt-public.pem'), 'utf8'));
  });

  test('--sandbox-payments writes the sandbox and its allowance, by name', async () => {
    const env = parseEnvFile((await runEnv('--sandbox-payments')).stdout);
    expect(env.get('PAYMENT_PROVIDER')).toBe('sandbox');
    expect(env.get('ALLOW_SANDBOX_PAYMENTS')).toBe('true');
  });

  test('an unknown argument is refused rather than ignored', async () => {
    await expect(runEnv('--sandbox')).rejects.toMatchObject({ code: 2 });
  });
});
