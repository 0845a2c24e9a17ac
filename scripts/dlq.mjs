#!/usr/bin/env node
// Lists and replays dead letters (ADR 0005: a message that failed its retries, or could never be
// read, waits in `<queue>.dlq`).
//
//   npm run dlq -- list <queue> [--limit N] [--json]
//   npm run dlq -- replay <queue> [--limit N] [--id <messageId>] [--json]
//
// <queue> is a consuming queue (`crm.bookings`) or its dead-letter queue (`crm.bookings.dlq`);
// with BUS_NAMESPACE set it is taken under that namespace. AMQP_URL names the broker
// (default amqp://guest:guest@127.0.0.1:5672). `list` changes nothing: every message it reads
// goes back to the queue. `replay` sends each message to the consuming queue only (not to the
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
import { createRequire } from 'node:module';
import { URL, fileURLToPath } from 'node:url';

const require = createRequire(fileURLToPath(new URL('../packages/infra/package.json', import.meta.url)));
const amqp = require('amqplib');

const USAGE = 'usage: npm run dlq -- list|replay <queue> [--limit N] [--id <messageId>] [--json]';

function parseArgs(argv) {
  const [command, queue, ...rest] = argv;
  const options = { limit: Infinity, id: null, json: false };
  for (let i = 0; i < rest.length; i += 1) {
    if (rest[i] === '--json') options.json = true;
    else if (rest[i] === '--limit') options.limit = Number(rest[++i]);
    else if (rest[i] === '--id') options.id = rest[++i];
    else throw new Error(`unknown option ${rest[i]}\n${USAGE}`);
  }
  if (!['list', 'replay'].includes(command) || !queue) throw new Error(USAGE);
  if (!(options.limit > 0)) throw new Error(`--limit must be a positive number\n${USAGE}`);
  return { command, queue, ...options };
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
    if (options.id && msg.properties.messageId !== options.id) {
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
        (err) => (err ? reject(err) : resolve()),
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

async function main() {
  if (process.argv.slice(2).some((arg) => arg === '--help' || arg === '-h')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const options = parseArgs(process.argv.slice(2));
  const names = queueNames(options.queue);
  const connection = await amqp.connect(process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672');
  try {
    if (options.command === 'list') await list(connection, names, options);
    else await replay(connection, names, options);
  } finally {
    await connection.close().catch(() => undefined);
  }
}

main().catch((err) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
