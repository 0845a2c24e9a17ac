import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import amqp from 'amqplib';
import { findRabbitBinary, LEAN_RABBIT_ERL_ARGS, rabbitErlangArgs, startLocalRabbit } from '../src/rabbit';
import { findDescendants } from '../src/process-tree';
import { provisionBusUsers } from '../src/bus-users';
import type { BrokerHandle } from '../src/rabbit';

jest.setTimeout(180_000);

// The RabbitMQ node `npm start` and the tests start themselves (when no Docker engine answers).
const binary = findRabbitBinary();
const local = binary ? describe : describe.skip;

describe('the Erlang flags of a node of our own', () => {
  test("the loopback interface, then RABBITMQ_ERL_MEMORY_ARGS, then the caller's RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS", () => {
    const loopback = '-kernel inet_dist_use_interface {127,0,0,1}';
    expect(rabbitErlangArgs({})).toBe(loopback);
    expect(rabbitErlangArgs({ RABBITMQ_ERL_MEMORY_ARGS: '' })).toBe(loopback);
    expect(rabbitErlangArgs({ RABBITMQ_ERL_MEMORY_ARGS: LEAN_RABBIT_ERL_ARGS, RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '+S 1:1' })).toBe(
      `${loopback} ${LEAN_RABBIT_ERL_ARGS} +S 1:1`,
    );
  });
});

local('a local RabbitMQ node', () => {
  let broker: BrokerHandle;
  const saved = process.env.RABBITMQ_ERL_MEMORY_ARGS;
  beforeAll(async () => {
    // The node `npm start` runs: its Erlang VM with the lean allocators (scripts/run.mjs sets them).
    process.env.RABBITMQ_ERL_MEMORY_ARGS = LEAN_RABBIT_ERL_ARGS;
    try {
      broker = await startLocalRabbit(binary!);
    } finally {
      if (saved === undefined) delete process.env.RABBITMQ_ERL_MEMORY_ARGS;
      else process.env.RABBITMQ_ERL_MEMORY_ARGS = saved;
    }
  });

  test("its Erlang VM runs with npm start's memory flags", async () => {
    const root = broker.processes!()[0]!.pid;
    const beams = (await findDescendants(root)).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('beam');
      } catch {
        return false;
      }
    });
    expect(beams.length).toBeGreaterThan(0);
    // erl hands its `+` emulator flags to beam as `-` ones.
    const args = readFileSync(`/proc/${beams[0]}/cmdline`, 'utf8').split('\0').join(' ');
    expect(args).toContain(LEAN_RABBIT_ERL_ARGS.replace(/\+/g, '-'));
  });

  test("its process table is npm start's, not the server script's (the later +P wins)", async () => {
    const limit = await broker.ctl!(['eval', 'erlang:system_info(process_limit).']);
    // The server script asks for 1,048,576 (a table the VM fills at boot, ≈ 11–15 MB): ours comes later.
    expect(limit.trim()).toBe('65536');
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
