#!/usr/bin/env node
// Lists and replays dead letters (ADR 0005: a message that failed its retries, or could never be
// read, waits in `<queue>.dlq`).
//
//   npm run dlq -- list [--json]                                   every dead-letter queue and its count
//   npm run dlq -- list <queue> [--limit N] [--json]               the dead letters of one queue
//   npm run dlq -- replay <queue> [--limit N] [--id <messageId>]… [--json]
//   npm run dlq -- drop <queue> --id <messageId> [--id …] [--json]
//
// <queue> is a consuming queue (`crm.bookings`) or its dead-letter queue (`crm.bookings.dlq`);
// with BUS_NAMESPACE set it is taken under that namespace. AMQP_URL names the broker
// (default amqp://guest:guest@127.0.0.1:5672). `list` changes nothing: every message it reads
// goes back to the queue; without a queue it counts the dead letters of every consuming queue of
// the platform (SUBSCRIPTIONS in packages/contracts) without reading any. `replay` sends each message to the consuming queue only (not to the
// exchange, whose other consumers already have it), its retry count reset, and removes it from
// the dead-letter queue after the broker confirmed the copy. Consumers are idempotent, so a
// replay of something that was applied after all changes nothing. The queues are quorum queues
// (docs/rabbitmq-queues.md): each look counts as a delivery, and `<queue>.dlq` is declared with a
// delivery limit out of reach so that listing never drops a dead letter.
//
// With a broker user per service (BUS_PUBLISHER_USERS), run `replay` with the consuming service's
// own AMQP_URL: a dead letter carries that service's user-id, and the broker lets only that user
// send it again (the consumer takes it back as its own copy). An event refused because another
// service published it (`x-refused`) is never replayed: it stays for a person to look at.
// `drop` removes the dead letters named by --id (each printed first) and puts the others back:
// for an event that should never have been sent. It never drops without an id.
import { createRequire } from 'node:module';
import { URL, fileURLToPath } from 'node:url';
import { amqplib, amqpTls } from './lib/deps.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const amqp = amqplib(root);

const COMMANDS = ['list', 'replay', 'drop'];
const USAGE = `usage:
  npm run dlq -- list [--json]                                  every dead-letter queue and how many it holds
  npm run dlq -- list <queue> [--limit N] [--json]              the dead letters of one queue (all stay)
  npm run dlq -- replay <queue> [--limit N] [--id <messageId>]… [--json]
  npm run dlq -- drop <queue> --id <messageId> [--id …] [--json]
<queue>: a consuming queue (crm.bookings) or its dead-letter queue (crm.bookings.dlq).
Environment: AMQP_URL (default amqp://guest:guest@127.0.0.1:5672), AMQP_TLS_CA_FILE (an amqps:// url), BUS_NAMESPACE.`;

class UsageError extends Error {}

function parseArgs(argv) {
  const [command, ...rest] = argv;
  if (command === '--help' || command === '-h') return { help: true };
  if (!COMMANDS.includes(command)) throw new UsageError(command ? `unknown command ${command}\n${USAGE}` : USAGE);
  const options = {
    command,
    queue: /** @type {string | null} */ (null),
    limit: Infinity,
    ids: /** @type {string[]} */ ([]),
    json: false,
    help: false,
  };
  for (let i = 0; i < rest.length; i += 1) {
    const arg = rest[i];
    if (arg === '--json') options.json = true;
    else if (arg === '--help' || arg === '-h') options.help = true;
    else if (arg === '--limit') options.limit = Number(rest[++i]);
    else if (arg === '--id') {
      const id = rest[++i];
      if (!id) throw new UsageError(`--id needs a message id\n${USAGE}`);
      options.ids.push(id);
    } else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}\n${USAGE}`);
    else if (options.queue === null) options.queue = arg;
    else throw new UsageError(`unexpected argument ${arg}\n${USAGE}`);
  }
  if (options.help) return options;
  if (!(options.limit > 0)) throw new UsageError(`--limit must be a positive number\n${USAGE}`);
  if (command !== 'list' && !options.queue) throw new UsageError(`${command} needs a queue\n${USAGE}`);
  if (command === 'drop' && options.ids.length === 0)
    throw new UsageError(`drop needs --id <messageId> (it never drops everything)\n${USAGE}`);
  if (command === 'list' && options.ids.length > 0) throw new UsageError(`list takes no --id\n${USAGE}`);
  return options;
}

function queueNames(given) {
  const namespace = process.env.BUS_NAMESPACE ?? '';
  const full = namespace && !given.startsWith(`${namespace}.`) ? `${namespace}.${given}` : given;
  const main = full.endsWith('.dlq') ? full.slice(0, -'.dlq'.length) : full;
  return { main, deadLetter: `${main}.dlq` };
}

function describe(msg) {
  const headers = msg.properties.headers ?? {};
  return {
    messageId: msg.properties.messageId ?? null,
    type: msg.properties.type ?? headers['x-original-routing-key'] ?? null,
    routingKey: headers['x-original-routing-key'] ?? msg.fields.routingKey,
    error: headers['x-error'] ?? null,
    attempts: Number(headers['x-attempt'] ?? 0),
    timestamp: msg.properties.timestamp ? new Date(msg.properties.timestamp * 1000).toISOString() : null,
    bytes: msg.content.length,
    body: msg.content.toString('utf8').slice(0, 500),
  };
}

/** Reads up to `limit` messages (of those there at the start) without acking them. */
async function readAll(channel, queue, limit) {
  const { messageCount } = await channel.checkQueue(queue);
  const messages = [];
  while (messages.length < Math.min(messageCount, limit)) {
    const msg = await channel.get(queue, { noAck: false });
    if (!msg) break;
    messages.push(msg);
  }
  return { total: messageCount, messages };
}

async function list(connection, names, options) {
  const channel = await connection.createChannel();
  const { total, messages } = await readAll(channel, names.deadLetter, options.limit);
  const rows = messages.map(describe);
  channel.nackAll(true);
  await channel.close();
  if (options.json) process.stdout.write(`${JSON.stringify({ queue: names.deadLetter, total, messages: rows })}\n`);
  else {
    process.stdout.write(`${names.deadLetter}: ${total} dead letter(s)${rows.length < total ? `, first ${rows.length} shown` : ''}\n`);
    for (const row of rows)
      process.stdout.write(
        `- ${row.messageId ?? '(no id)'} ${row.routingKey} attempts=${row.attempts} at=${row.timestamp}\n  error: ${row.error}\n`,
      );
  }
}

async function replay(connection, names, options) {
  const channel = await connection.createChannel();
  const confirm = await connection.createConfirmChannel();
  await channel.checkQueue(names.main);
  const { total, messages } = await readAll(channel, names.deadLetter, options.limit);
  const replayed = [];
  const refused = [];
  for (const msg of messages) {
    if (options.ids.length > 0 && !options.ids.includes(msg.properties.messageId)) {
      channel.nack(msg, false, true);
      continue;
    }
    const headers = { ...msg.properties.headers };
    if (headers['x-refused']) {
      channel.nack(msg, false, true);
      refused.push(describe(msg));
      continue;
    }
    const error = headers['x-error'];
    delete headers['x-attempt'];
    delete headers['x-error'];
    await new Promise((resolve, reject) =>
      confirm.publish(
        '',
        names.main,
        msg.content,
        { ...msg.properties, headers: { ...headers, 'x-replayed-from-dlq': new Date().toISOString(), 'x-last-error': error } },
        (err) => (err ? reject(err) : resolve(undefined)),
      ),
    );
    channel.ack(msg);
    replayed.push(describe(msg));
  }
  await confirm.close();
  await channel.close();
  if (options.json) process.stdout.write(`${JSON.stringify({ queue: names.deadLetter, to: names.main, total, replayed, refused })}\n`);
  else {
    process.stdout.write(`${names.deadLetter}: replayed ${replayed.length} of ${total} to ${names.main}\n`);
    for (const row of replayed) process.stdout.write(`- ${row.messageId ?? '(no id)'} ${row.routingKey}\n`);
    for (const row of refused) process.stdout.write(`- kept (refused publisher): ${row.messageId ?? '(no id)'} ${row.routingKey}\n`);
  }
}

/** The platform's consuming queues (SUBSCRIPTIONS), from the built contracts. */
function platformQueues() {
  const contracts = createRequire(`${root}packages/contracts/package.json`)('./dist/index.js');
  return contracts.SUBSCRIPTION_LIST.map((subscription) => subscription.queue);
}

/** How many dead letters each consuming queue's `.dlq` holds (checkQueue: nothing is read). */
async function summary(connection, options) {
  const rows = [];
  for (const queue of platformQueues()) {
    const { deadLetter } = queueNames(queue);
    const channel = await connection.createChannel();
    channel.on('error', () => undefined); // a queue that does not exist closes the channel: reported below
    try {
      const { messageCount } = await channel.checkQueue(deadLetter);
      rows.push({ queue: deadLetter, deadLetters: messageCount });
      await channel.close();
    } catch {
      rows.push({ queue: deadLetter, deadLetters: null });
    }
  }
  const total = rows.reduce((sum, row) => sum + (row.deadLetters ?? 0), 0);
  if (options.json) process.stdout.write(`${JSON.stringify({ total, queues: rows })}\n`);
  else {
    const width = Math.max(...rows.map((row) => row.queue.length));
    for (const row of rows) process.stdout.write(`${row.queue.padEnd(width)}  ${row.deadLetters ?? 'not declared'}\n`);
    process.stdout.write(`${total} dead letter(s)${total > 0 ? ': `npm run dlq -- list <queue>` shows them' : ''}\n`);
  }
}

async function drop(connection, names, options) {
  const channel = await connection.createChannel();
  const { total, messages } = await readAll(channel, names.deadLetter, options.limit);
  const dropped = [];
  for (const msg of messages) {
    if (options.ids.includes(msg.properties.messageId)) {
      dropped.push(describe(msg));
      channel.ack(msg);
    } else channel.nack(msg, false, true);
  }
  await channel.close();
  const missing = options.ids.filter((id) => !dropped.some((row) => row.messageId === id));
  if (options.json) process.stdout.write(`${JSON.stringify({ queue: names.deadLetter, total, dropped, missing })}\n`);
  else {
    process.stdout.write(`${names.deadLetter}: dropped ${dropped.length} of ${total}\n`);
    for (const row of dropped) process.stdout.write(`- dropped ${row.messageId} ${row.routingKey}\n  body: ${row.body}\n`);
    for (const id of missing) process.stdout.write(`- not found: ${id}\n`);
  }
  if (missing.length > 0) process.exitCode = 1;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const url = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
  const connection = await amqp.connect(url, amqpTls(root, url));
  try {
    if (options.command === 'list' && !options.queue) await summary(connection, options);
    else if (options.command === 'list') await list(connection, queueNames(options.queue), options);
    else if (options.command === 'drop') await drop(connection, queueNames(options.queue), options);
    else await replay(connection, queueNames(options.queue), options);
  } finally {
    await connection.close().catch(() => undefined);
  }
}

main().catch((err) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(err instanceof UsageError ? 2 : 1);
});
