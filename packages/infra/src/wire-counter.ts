import { createServer, Socket, type Server } from 'node:net';

/**
 * A TCP relay in front of a MongoDB-compatible server that counts the commands clients send
 * (OP_MSG, by command name), for tests that pin how many database round trips an operation
 * costs. Server monitoring (`hello`, `ping`, `endSessions`, …) is counted apart, as it runs
 * on its own schedule.
 */
export interface WireCounter {
  /** The same server as `target`, through the relay. */
  url: string;
  /** Commands seen since the last reset, by name (`find`, `update`, `findAndModify`, …). */
  counts(): Record<string, number>;
  /** The sum of `counts()`. */
  total(): number;
  /**
   * The commands seen since the last reset when started with `record`, as sent (OP_MSG,
   * monitoring left out): the body document and each document sequence (`documents`,
   * `updates`, `deletes`), still BSON.
   */
  commands(): WireCommand[];
  reset(): void;
  stop(): Promise<void>;
}

/** One OP_MSG command: its body and its document sequences, as BSON. */
export interface WireCommand {
  name: string;
  body: Buffer;
  sequences: Record<string, Buffer[]>;
}

const OP_MSG = 2013;

/** The sections of an OP_MSG (kind 0: the body; kind 1: a named sequence of documents). */
function sectionsOf(message: Buffer, name: string): WireCommand {
  const command: WireCommand = { name, body: Buffer.alloc(0), sequences: {} };
  const flags = message.readUInt32LE(16);
  const end = message.length - (flags & 1 ? 4 : 0); // checksumPresent
  let offset = 20;
  while (offset < end) {
    const kind = message[offset]!;
    if (kind === 0) {
      const size = message.readInt32LE(offset + 1);
      command.body = Buffer.from(message.subarray(offset + 1, offset + 1 + size));
      offset += 1 + size;
    } else {
      const size = message.readInt32LE(offset + 1);
      const idEnd = message.indexOf(0, offset + 5);
      const identifier = message.toString('utf8', offset + 5, idEnd);
      const documents: Buffer[] = [];
      for (let at = idEnd + 1; at < offset + 1 + size;) {
        const length = message.readInt32LE(at);
        documents.push(Buffer.from(message.subarray(at, at + length)));
        at += length;
      }
      command.sequences[identifier] = documents;
      offset += 1 + size;
    }
  }
  return command;
}
const MONITORING = new Set(['hello', 'ismaster', 'isMaster', 'ping', 'endSessions', 'buildInfo', 'saslStart', 'saslContinue']);

/** The first key of an OP_MSG's body document: the command's name. */
function commandName(message: Buffer): string | null {
  if (message.readInt32LE(12) !== OP_MSG) return null;
  let offset = 20; // header (16) + flagBits (4)
  while (offset < message.length) {
    const kind = message[offset]!;
    if (kind === 0) {
      const nameStart = offset + 1 + 4 + 1; // kind, document size, first element's type
      const nameEnd = message.indexOf(0, nameStart);
      return message.toString('utf8', nameStart, nameEnd);
    }
    offset += 1 + message.readInt32LE(offset + 1); // a kind-1 section: its size, then skip
  }
  return null;
}

/** `record`: keep each command as sent, for `commands()` (tests only: a long run would keep them all). */
export async function startWireCounter(target: string, { record = false }: { record?: boolean } = {}): Promise<WireCounter> {
  const parsed = new URL(target);
  const host = parsed.hostname || '127.0.0.1';
  const port = Number(parsed.port || 27017);
  let counts: Record<string, number> = {};
  let commands: WireCommand[] = [];
  const sockets = new Set<Socket>();

  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 16 && pending.length >= pending.readInt32LE(0)) {
        const length = pending.readInt32LE(0);
        const name = commandName(pending.subarray(0, length));
        if (name && !MONITORING.has(name)) {
          counts[name] = (counts[name] ?? 0) + 1;
          if (record) commands.push(sectionsOf(pending.subarray(0, length), name));
        }
        pending = pending.subarray(length);
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
    upstream.connect(port, host);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const relayPort = typeof address === 'object' && address ? address.port : 0;
  const url = new URL(target);
  url.host = `127.0.0.1:${relayPort}`;
  return {
    url: url.toString(),
    counts: () => ({ ...counts }),
    total: () => Object.values(counts).reduce((sum, n) => sum + n, 0),
    commands: () => [...commands],
    reset: () => {
      counts = {};
      commands = [];
    },
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

type Doc = Record<string, unknown>;

/** The filters a command targets (`filter`), or the documents it inserts (`document`). */
function targetsOf(command: WireCommand, deserialize: (bson: Buffer) => Doc): { collection: string; what: string; documents: Doc[] } {
  const body = deserialize(command.body);
  const collection = String(body[command.name]);
  const listed = (key: string, field?: string): Doc[] =>
    ((body[key] as Doc[] | undefined) ?? command.sequences[key]?.map(deserialize) ?? []).map((doc) => (field ? (doc[field] as Doc) : doc));
  switch (command.name) {
    case 'find':
    case 'count':
    case 'distinct':
      return { collection, what: 'filter', documents: [(body.filter ?? body.query ?? {}) as Doc] };
    case 'findAndModify':
      return { collection, what: 'filter', documents: [body.query as Doc] };
    case 'update':
      return { collection, what: 'filter', documents: listed('updates', 'q') };
    case 'delete':
      return { collection, what: 'filter', documents: listed('deletes', 'q') };
    case 'insert':
      return { collection, what: 'document', documents: listed('documents') };
    case 'aggregate':
      return { collection, what: 'filter', documents: [((body.pipeline as Doc[])[0]?.$match ?? {}) as Doc] };
    default:
      return { collection, what: command.name, documents: [] };
  }
}

/** A filter names `key` when it pins it to a value (or a few: `$eq`, `$in`), at the top, in an `$and`, or in every branch of an `$or`. */
function pins(filter: Doc, key: string): boolean {
  const value = filter[key];
  if (value !== undefined) {
    if (typeof value !== 'object' || value === null || value instanceof Date) return true;
    return '$eq' in (value as Doc) || '$in' in (value as Doc);
  }
  if (Array.isArray(filter.$and) && (filter.$and as Doc[]).some((branch) => pins(branch, key))) return true;
  return Array.isArray(filter.$or) && (filter.$or as Doc[]).every((branch) => pins(branch, key));
}

/**
 * The commands among `commands` on a collection of `shardKeys` (collection → the field it would
 * be sharded by) whose filter does not pin that field (an insert: whose document lacks it) — the
 * queries a sharded cluster would have to send to every shard. One line per problem.
 */
export function untargetedCommands(
  commands: WireCommand[],
  shardKeys: Record<string, string>,
  deserialize: (bson: Buffer) => Doc,
): string[] {
  const problems: string[] = [];
  for (const command of commands) {
    const { collection, what, documents } = targetsOf(command, deserialize);
    const key = shardKeys[collection];
    if (!key) continue;
    if (what !== 'filter' && what !== 'document') problems.push(`${command.name} on ${collection}: a command this check does not read`);
    for (const document of documents)
      if (what === 'document' ? document[key] === undefined : !pins(document, key))
        problems.push(`${command.name} on ${collection} ${JSON.stringify(document)}: no ${key}`);
  }
  return problems;
}
