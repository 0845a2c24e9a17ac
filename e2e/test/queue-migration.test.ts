import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { classicQueueArguments, connectAmqp, queueAccepts, takeMessageIds, testServers, uniqueName } from '@mkt/infra';

// `node scripts/migrate-queues.mjs` against the real broker: every queue of every service,
// declared classic as the version before quorum queues did and holding messages, ends a quorum
// queue with the same messages; a second run has nothing to do.

interface QueuePlan {
  name: string;
  arguments: Record<string, unknown>;
  bindings: Array<{ exchange: string; routingKey: string }>;
}

const root = join(__dirname, '..', '..');
const { amqpUrl } = testServers();
const namespace = uniqueName('qmigrate');

function script(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [join(root, 'scripts', 'migrate-queues.mjs'), ...args],
      { env: { ...process.env, AMQP_URL: amqpUrl, BUS_NAMESPACE: namespace } },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
    ),
  );
}

let connection: Awaited<ReturnType<typeof connectAmqp>>;
let channel: Awaited<ReturnType<typeof connection.createConfirmChannel>>;
beforeAll(async () => {
  connection = await connectAmqp(amqpUrl);
  channel = await connection.createConfirmChannel();
});
afterAll(async () => {
  await connection.close();
});

const classicArguments = (plan: QueuePlan): Record<string, unknown> => classicQueueArguments(plan.arguments);

const declaresAs = (queue: string, args: Record<string, unknown>): Promise<boolean> => queueAccepts(connection, queue, args);

const drain = (queue: string): Promise<string[]> => takeMessageIds(channel, queue);

test('every classic queue of every service becomes a quorum queue with its messages', async () => {
  const plans = JSON.parse(await script('--list', '--json')) as QueuePlan[];
  expect(plans.length).toBeGreaterThanOrEqual(5 * 8);
  await channel.assertExchange(`${namespace}.marketplace.events`, 'topic', { durable: true });
  await channel.assertExchange(`${namespace}.marketplace.dlx`, 'direct', { durable: true });
  const expected = new Map<string, string[]>();
  for (const plan of plans) {
    await channel.assertQueue(plan.name, { durable: true, arguments: classicArguments(plan) });
    for (const { exchange, routingKey } of plan.bindings) await channel.bindQueue(plan.name, exchange, routingKey);
    // Two messages each, straight into the queue (a delay queue's TTL is long enough to keep them).
    const ids = [`${plan.name}#1`, `${plan.name}#2`];
    for (const id of ids) channel.sendToQueue(plan.name, Buffer.from('{}'), { messageId: id, persistent: true });
    await channel.waitForConfirms();
    expected.set(plan.name, ids);
  }
  for (const plan of plans) expect(await declaresAs(plan.name, plan.arguments)).toBe(false);

  const first = JSON.parse(await script('--json')) as Array<{ queue: string; outcome: string; moved: number }>;
  expect(first.map((r) => r.outcome)).toEqual(plans.map(() => 'migrated'));
  for (const plan of plans) expect(await declaresAs(plan.name, plan.arguments)).toBe(true);
  const again = JSON.parse(await script('--json')) as Array<{ outcome: string }>;
  expect(again.map((r) => r.outcome)).toEqual(plans.map(() => 'already-current'));
  // The delay queues send expired messages on to their main queues: read every queue of a
  // concern together.
  const byConcern = new Map<string, string[]>();
  for (const plan of plans) {
    const concern = plan.name.replace(/(\.retry\.\d+|\.dlq)$/, '');
    byConcern.set(concern, [...(byConcern.get(concern) ?? []), plan.name]);
  }
  for (const [concern, queues] of byConcern) {
    const got = (await Promise.all(queues.map(drain))).flat().sort();
    expect({ concern, got }).toEqual({ concern, got: queues.flatMap((queue) => expected.get(queue)!).sort() });
    for (const queue of queues) await channel.deleteQueue(queue);
  }
}, 120_000);
