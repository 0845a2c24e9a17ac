import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';

// scripts/dlq.mjs against the real broker: the summary of every dead-letter queue without a queue
// named, and `drop` removing only the dead letters named by id. (list <queue> and replay through a
// running system: e2e/test/faults-consumers.test.ts.)
const root = join(__dirname, '..', '..');
const amqp = createRequire(join(root, 'packages', 'kit', 'package.json'))('amqplib');
const amqpUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const namespace = `dlqtest${randomBytes(4).toString('hex')}`;
// As packages/kit declares a dead-letter queue (docs/rabbitmq-queues.md).
const DLQ_ARGUMENTS = { 'x-queue-type': 'quorum', 'x-delivery-limit': 1_000_000_000 };

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function dlq(...args: string[]): Promise<Run> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [join(root, 'scripts', 'dlq.mjs'), ...args],
      { env: { ...process.env, AMQP_URL: amqpUrl, BUS_NAMESPACE: namespace } },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

async function json(...args: string[]) {
  const run = await dlq(...args, '--json');
  if (run.code !== 0) throw new Error(`dlq ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- amqplib's types are not a dependency of the tests
let connection: any;
const declared = [`${namespace}.crm.bookings.dlq`, `${namespace}.wallet.users.dlq`];

beforeAll(async () => {
  connection = await amqp.connect(amqpUrl);
  const channel = await connection.createConfirmChannel();
  for (const queue of declared) await channel.assertQueue(queue, { durable: true, arguments: DLQ_ARGUMENTS });
  for (const id of ['a', 'b', 'c'])
    channel.sendToQueue(declared[0], Buffer.from(JSON.stringify({ id, type: 'booking.confirmed' })), {
      messageId: `${namespace}-${id}`,
      persistent: true,
      headers: { 'x-error': `handler failed on ${id}`, 'x-original-routing-key': 'booking.confirmed' },
    });
  await channel.waitForConfirms();
  await channel.close();
});

afterAll(async () => {
  const channel = await connection.createChannel();
  for (const queue of declared) await channel.deleteQueue(queue);
  await channel.close();
  await connection.close();
});

test('`dlq list` without a queue counts the dead letters of every consuming queue and reads none', async () => {
  const summary = await json('list');
  expect(summary.total).toBe(3);
  const byQueue = Object.fromEntries(
    summary.queues.map((row: { queue: string; deadLetters: number | null }) => [row.queue, row.deadLetters]),
  );
  expect(byQueue[`${namespace}.crm.bookings.dlq`]).toBe(3);
  expect(byQueue[`${namespace}.wallet.users.dlq`]).toBe(0);
  // Every platform queue is named; those never declared on this namespace say so.
  expect(Object.keys(byQueue).length).toBeGreaterThanOrEqual(8);
  expect(Object.values(byQueue).filter((count) => count === null).length).toBe(Object.keys(byQueue).length - 2);
  const text = await dlq('list');
  expect(text.code).toBe(0);
  expect(text.stdout).toMatch(new RegExp(`${namespace}\\.crm\\.bookings\\.dlq\\s+3`));
  expect(text.stdout).toMatch(/not declared/);
  // Counting consumed nothing.
  expect((await json('list', 'crm.bookings')).total).toBe(3);
});

test('`dlq drop` removes only the dead letters named, and refuses to drop without an id', async () => {
  const dropped = await json('drop', 'crm.bookings', '--id', `${namespace}-b`);
  expect(dropped.dropped.map((row: { messageId: string }) => row.messageId)).toEqual([`${namespace}-b`]);
  const left = await json('list', 'crm.bookings');
  expect(left.total).toBe(2);
  expect(left.messages.map((row: { messageId: string }) => row.messageId).sort()).toEqual([`${namespace}-a`, `${namespace}-c`]);

  const unknown = await dlq('drop', 'crm.bookings', '--id', 'no-such-id', '--json');
  expect(unknown.code).toBe(1);
  expect(JSON.parse(unknown.stdout)).toMatchObject({ dropped: [], missing: ['no-such-id'] });

  const noId = await dlq('drop', 'crm.bookings');
  expect(noId.code).toBe(2);
  expect(noId.stderr).toMatch(/drop needs --id/);
  expect((await json('list', 'crm.bookings')).total).toBe(2);
});

test('a command that does not exist fails, with or without --help', async () => {
  for (const args of [['requeue', 'crm.bookings'], ['requeue', '--help'], []]) {
    const run = await dlq(...args);
    expect({ args, code: run.code }).toEqual({ args, code: 2 });
  }
  expect((await dlq('drop', '--help')).code).toBe(0);
});
