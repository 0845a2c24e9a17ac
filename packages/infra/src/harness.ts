import { randomUUID } from 'node:crypto';
import amqp, { type Channel, type ChannelModel, type ConsumeMessage, type GetMessage } from 'amqplib';
import type { SignOptions } from 'jsonwebtoken';
import { DEAD_LETTER_EXCHANGE, EVENTS_EXCHANGE } from '@mkt/contracts/bus-access';
import { newReference } from '@mkt/contracts/references';
import { call, makeKeyPair, signTestToken, testServers, uniqueName, type JsonResponse, type KeyPair, type TestUser } from './testing';

export interface WaitOptions<T> {
  /** What is waited for, as the failure message should say it ("the booking's refund"). */
  what: string;
  timeoutMs?: number;
  intervalMs?: number;
  /** When the value is good enough; by default when it is truthy. */
  until?: (value: T) => boolean;
}

/**
 * Asks `check` again and again until its answer holds, and returns that answer. A test waits
 * for a condition this way, never for a fixed time: a fixed sleep is too short on a loaded
 * machine and wasted on a quiet one. Fails naming what it waited for and the last answer.
 */
export async function waitFor<T>(check: () => T | Promise<T>, options: WaitOptions<T>): Promise<T> {
  const { what, timeoutMs = 15_000, intervalMs = 50, until = Boolean } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (until(value)) return value;
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}; last seen: ${shown(value)}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

function shown(value: unknown): string {
  try {
    const text =
      JSON.stringify(value, (_key, inner: unknown) => (inner instanceof Map ? Object.fromEntries(inner) : inner)) ?? String(value);
    return text.length > 500 ? `${text.slice(0, 500)}…` : text;
  } catch {
    return String(value);
  }
}

/** A test file's own place on the shared servers. */
export interface TestEnv {
  /** A database name no other run or file uses. */
  dbName: string;
  /** BUS_NAMESPACE: exchanges and queues of its own on the shared broker. */
  namespace: string;
  /** The events exchange under the namespace, `<namespace>.marketplace.events`. */
  events: string;
  /** The dead-letter exchange under the namespace. */
  deadLetter: string;
  /** A queue's name under the namespace: `queue('crm.bookings.dlq')`. */
  queue: (name: string) => string;
  /**
   * The environment a service of this file starts with: the shared servers, the public key its
   * tokens are checked with, any free port and this namespace; `extra` adds or overrides.
   */
  serviceEnv: (publicKey: string, extra?: Record<string, string>) => Record<string, string>;
}

/**
 * A database and a broker namespace of their own, for one test file: its queues (and their
 * retry TTLs and dead letters) are then its alone, on a broker other files and runs reuse.
 */
export function testEnv(name: string): TestEnv {
  // BUS_NAMESPACE takes lower-case letters, digits, _ and -, up to 40 of them.
  const namespace = uniqueName(
    name
      .toLowerCase()
      .replace(/[^a-z0-9_-]/g, '')
      .slice(0, 20),
  );
  const queue = (queueName: string) => `${namespace}.${queueName}`;
  const serviceEnv = (publicKey: string, extra: Record<string, string> = {}) => {
    const { mongoUrl, amqpUrl } = testServers();
    return { MONGO_URL: mongoUrl, AMQP_URL: amqpUrl, JWT_PUBLIC_KEY: publicKey, PORT: '0', BUS_NAMESPACE: namespace, ...extra };
  };
  return { dbName: namespace, namespace, events: queue(EVENTS_EXCHANGE), deadLetter: queue(DEAD_LETTER_EXCHANGE), queue, serviceEnv };
}

export interface TestIdentity {
  /** The key pair the service under test trusts (JWT_PUBLIC_KEY) and the tests sign with. */
  keys: KeyPair;
  newUser: (role?: TestUser['role'], fields?: Partial<Omit<TestUser, 'role'>>) => TestUser;
  tokenOf: (user: TestUser, options?: SignOptions) => string;
  /** Calls the server at `base` as `user` (anonymous without one). */
  as: (base: string | (() => string), user: TestUser | undefined) => (method: string, path: string, body?: object) => Promise<JsonResponse>;
}

/** Users and their access tokens, as the gateway would issue them, for one test file. */
export function testIdentity(): TestIdentity {
  const keys = makeKeyPair();
  const tokenOf = (user: TestUser, options?: SignOptions) => signTestToken(keys.privateKey, user, options);
  return {
    keys,
    newUser: (role = 'buyer', fields = {}) => ({ id: randomUUID(), ref: newReference('USR'), role, ...fields }),
    tokenOf,
    as: (base, user) => (method, path, body) =>
      call(typeof base === 'string' ? base : base(), method, path, { token: user && tokenOf(user), body }),
  };
}

/** A message as a test reads it: its text, its JSON (when it is JSON), its headers. */
export interface SeenMessage {
  content: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  headers: Record<string, unknown>;
}

function seenMessage(msg: ConsumeMessage | GetMessage): SeenMessage {
  const content = msg.content.toString();
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch {
    json = undefined;
  }
  return { content, json, headers: msg.properties.headers ?? {} };
}

export interface EventListener {
  /** Every event seen so far, in arrival order. */
  seen: SeenMessage[];
  /** The first event (seen or to come) that `match`es. */
  waitFor: (match: (event: SeenMessage) => boolean, what: string, timeoutMs?: number) => Promise<SeenMessage>;
  /**
   * Returns once every event published before the call has been seen: a marker sent to the
   * listener's queue after them comes back last. A test that checks an event came only once
   * (or not at all) calls this first, instead of sleeping.
   */
  settle: () => Promise<void>;
  close: () => Promise<void>;
}

/** Collects the events of some routing keys on `exchange` published from now on. */
export async function listenForEvents(amqpUrl: string, exchange: string, routingKeys: string[]): Promise<EventListener> {
  const connection = await amqp.connect(amqpUrl);
  const channel = await connection.createChannel();
  const { queue } = await channel.assertQueue('', { exclusive: true });
  for (const key of routingKeys) await channel.bindQueue(queue, exchange, key);
  const seen: SeenMessage[] = [];
  const markers = new Set<string>();
  await channel.consume(
    queue,
    (msg) => {
      if (!msg) return;
      if (msg.properties.type === 'test.marker') markers.add(String(msg.properties.messageId));
      else seen.push(seenMessage(msg));
    },
    { noAck: true },
  );
  return {
    seen,
    waitFor: (match, what, timeoutMs) => waitFor(() => seen.find(match), { what, timeoutMs }) as Promise<SeenMessage>,
    async settle() {
      const marker = randomUUID();
      channel.sendToQueue(queue, Buffer.from('{}'), { type: 'test.marker', messageId: marker });
      await waitFor(() => markers.has(marker), { what: `the marker sent after the events to ${queue}` });
    },
    close: () => connection.close(),
  };
}

/** Whether the broker accepts declaring `queue` with these arguments (it refuses inequivalent ones). */
export async function queueAccepts(connection: ChannelModel, queue: string, args: Record<string, unknown>): Promise<boolean> {
  const probe = await connection.createChannel();
  probe.on('error', () => undefined);
  try {
    await probe.assertQueue(queue, { durable: true, arguments: args });
    await probe.close();
    return true;
  } catch {
    return false;
  }
}

/** A quorum queue's arguments as the classic queue of earlier versions had them (migration tests). */
export function classicQueueArguments(quorum: Record<string, unknown>): Record<string, unknown> {
  const old = { ...quorum };
  for (const key of ['x-queue-type', 'x-delivery-limit', 'x-dead-letter-strategy', 'x-overflow']) delete old[key];
  return old;
}

/** Takes every message now in `queue` (acknowledged) and returns their message ids, in queue order. */
export async function takeMessageIds(channel: Channel, queue: string): Promise<string[]> {
  const ids: string[] = [];
  for (let msg = await channel.get(queue); msg; msg = await channel.get(queue)) {
    ids.push(String(msg.properties.messageId));
    channel.ack(msg);
  }
  return ids;
}

export interface QueueReader {
  /** Every message taken off the queue so far. */
  taken: SeenMessage[];
  /** The first message (taken or still in the queue) that `match`es; those before it are taken too. */
  waitFor: (match: (message: SeenMessage) => boolean, what: string, timeoutMs?: number) => Promise<SeenMessage>;
  close: () => Promise<void>;
}

/**
 * Reads a queue the test looks at itself (a dead-letter or an audit queue) and picks its own
 * messages out: a queue of the test's own namespace, whose messages it may take.
 */
export async function readQueue(amqpUrl: string, queue: string): Promise<QueueReader> {
  const connection: ChannelModel = await amqp.connect(amqpUrl);
  const channel = await connection.createChannel();
  const taken: SeenMessage[] = [];
  const takeAll = async () => {
    for (let msg = await channel.get(queue, { noAck: true }); msg; msg = await channel.get(queue, { noAck: true }))
      taken.push(seenMessage(msg));
  };
  return {
    taken,
    waitFor: (match, what, timeoutMs) =>
      waitFor(
        async () => {
          await takeAll();
          return taken.find(match);
        },
        { what: `${what} in ${queue}`, timeoutMs },
      ) as Promise<SeenMessage>,
    close: () => connection.close(),
  };
}
