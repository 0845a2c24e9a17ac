import { execFileSync } from 'node:child_process';
import amqp from 'amqplib';
import { findRabbitBinary, startLocalRabbit } from '../src/rabbit';
import { findDescendants } from '../src/process-tree';
import { provisionBusUsers } from '../src/bus-users';
import type { BrokerHandle } from '../src/rabbit';

jest.setTimeout(180_000);

// The RabbitMQ node `npm start` and the tests start themselves (when no Docker engine answers).
const binary = findRabbitBinary();
const local = binary ? describe : describe.skip;

local('a local RabbitMQ node', () => {
  let broker: BrokerHandle;
  beforeAll(async () => {
    broker = await startLocalRabbit(binary!);
  });
  afterAll(async () => {
    await broker?.stop();
  });

  test('listens on 127.0.0.1 only: its AMQP port and its Erlang distribution port', async () => {
    const root = broker.processes!()[0]!.pid;
    const pids = new Set([root, ...(await findDescendants(root))]);
    const listening = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => [...line.matchAll(/pid=(\d+),/g)].some(([, pid]) => pids.has(Number(pid))))
      .map((line) => line.trim().split(/\s+/)[3]!);
    // epmd is shared by every node of the machine (it may have been started by another): not counted.
    expect(listening.length).toBeGreaterThanOrEqual(2);
    for (const address of listening) expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  test('gives each service a user of its own that publishes only its own events', async () => {
    const users = await provisionBusUsers(broker.ctl!, broker.url);
    expect(users.publisherUsers).toMatch(/^mkt_[0-9a-f]{8}_\{service\}$/);
    const connection = await amqp.connect(users.urlOf('review'));
    try {
      const channel = await connection.createConfirmChannel();
      await channel.assertExchange('marketplace.events', 'topic', { durable: true });
      const publish = (key: string) =>
        new Promise<string>((resolve) => {
          channel.once('error', (err: Error) => resolve(err.message));
          channel.publish('marketplace.events', key, Buffer.from('{}'), {}, (err) => {
            if (!err) resolve('confirmed');
          });
        });
      expect(await publish('review.created')).toBe('confirmed');
      expect(await publish('wallet.booking_payment.captured')).toMatch(/ACCESS_REFUSED - access to topic/);
    } finally {
      await connection.close().catch(() => undefined);
    }
  });
});
