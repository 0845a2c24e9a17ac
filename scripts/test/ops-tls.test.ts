import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The operations tools connect as the services do: to a broker over TLS (amqps://) verifying its
// certificate against AMQP_TLS_CA_FILE, refusing one another CA signed; to MongoDB by kit's rule,
// which refuses a URL that turns certificate verification off. A RabbitMQ node of this file's own
// has the TLS listener (certificates made with openssl); the tests' MongoDB has no TLS, so the
// MongoDB side shows the refusal only.
const root = join(__dirname, '..', '..');
/** What this test uses of the built infra (packages/infra: the tests' servers). */
interface Infra {
  makeTestCertificates(): Promise<{ caFile: string; otherCaFile: string; remove(): void }>;
  startTlsBroker(certs: unknown): Promise<{ url: string; tlsUrl?: string; stop(): Promise<void> }>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the built infra, as the other tools load it
const infra = require(join(root, 'packages', 'infra', 'dist', 'index.js')) as Infra;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function tool(script: string, args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [join(root, 'scripts', script), ...args],
      { env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

let certs: Awaited<ReturnType<typeof infra.makeTestCertificates>>;
let broker: Awaited<ReturnType<typeof infra.startTlsBroker>>;
const namespace = `opstls${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  certs = await infra.makeTestCertificates();
  broker = await infra.startTlsBroker(certs);
}, 180_000);

afterAll(async () => {
  await broker?.stop();
  certs?.remove();
}, 60_000);

test('`dlq list` reaches the broker over TLS with the CA of its certificate', async () => {
  const run = await tool('dlq.mjs', ['list', '--json'], {
    AMQP_URL: broker.tlsUrl!,
    AMQP_TLS_CA_FILE: certs.caFile,
    BUS_NAMESPACE: namespace,
  });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  // Connected: every consuming queue's dead-letter queue is looked up (none declared on this broker).
  const summary = JSON.parse(run.stdout) as { total: number; queues: Array<{ queue: string; deadLetters: number | null }> };
  expect(summary.total).toBe(0);
  expect(summary.queues).toContainEqual({ queue: `${namespace}.crm.bookings.dlq`, deadLetters: null });
}, 60_000);

test('`dlq list` and `migrate-queues` refuse a broker whose certificate the configured CA did not sign', async () => {
  const env = { AMQP_URL: broker.tlsUrl!, AMQP_TLS_CA_FILE: certs.otherCaFile, BUS_NAMESPACE: namespace };
  for (const [script, args] of [
    ['dlq.mjs', ['list']],
    ['migrate-queues.mjs', ['review', '--wait-ms', '0']],
  ] as const) {
    const run = await tool(script, [...args], env);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/certificate/i);
  }
}, 120_000);

test('a CA file with a plain amqp:// url is a configuration error, said before connecting', async () => {
  const run = await tool('dlq.mjs', ['list'], { AMQP_URL: broker.url, AMQP_TLS_CA_FILE: certs.caFile, BUS_NAMESPACE: namespace });
  expect(run.code).not.toBe(0);
  expect(run.stderr).toContain('AMQP_TLS_CA_FILE is set but AMQP_URL is not amqps://');
}, 60_000);

test('`backup` refuses a MongoDB url that turns certificate verification off, and writes nothing', async () => {
  const dir = join(tmpdir(), `ops-tls-${randomBytes(4).toString('hex')}`);
  const run = await tool('backup.mjs', ['backup', '--services', 'review', '--dir', dir], {
    MONGO_URL: 'mongodb://127.0.0.1:1/?tls=true&tlsAllowInvalidCertificates=true',
    BACKUP_AGE_RECIPIENTS: '',
  });
  expect(run.code).not.toBe(0);
  expect(run.stderr).toContain('tlsAllowInvalidCertificates=true turns certificate verification off');
  expect(existsSync(dir)).toBe(false);
}, 60_000);
