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
  /**
   * Puts a fault on `times` commands named `command` (on `collection`, when given) after the
   * next `skip`, for tests of what a client does when a command fails (needs `bson` at the
   * start). Faults on the same commands take turns in the order set: one waits until those
   * before it are spent. A failed command is counted and recorded as the client sent it. A
   * command that expects no answer (`moreToCome`: a w:0 write) is never hit, nor one a
   * `writeErrorAt` cannot be put on; both pass untouched, the fault waiting for the next (`skip`
   * counts them as it counts any matching command).
   * Throws when `writeErrorAt` is not a whole number ≥ 0 or the command not `insert`.
   */
  failNext(fault: WireFault): void;
  /** Forgets the counts, the commands recorded and the faults `failNext` set that are not spent yet. */
  reset(): void;
  stop(): Promise<void>;
}

/**
 * What the relay does to a command it fails (never one that expects no answer):
 * - `error`: never sent on; the client is answered an error of the whole command (InternalError).
 * - `drop`: sent on and applied by the server; its answer is withheld and the connection closed
 *   (the client sees a network error and cannot know the command ran).
 * - `{ writeErrorAt: k }` (an insert of more than k documents: one of k or fewer passes untouched,
 *   the fault waiting): its documents before index k sent on (as the client sent them, in the
 *   body or a document sequence); when the server answers it took all k, the answer says document
 *   k was refused by a write error that is not a duplicate key (code 2, BadValue), as an ordered
 *   insert reports it — those after it not tried. An answer of the server's own that says
 *   otherwise (its own write errors, `ok` not 1, fewer than k in) reaches the client unchanged,
 *   the fault spent on it. k = 0 is answered by the relay, nothing sent on.
 * - `hang`: sent on and applied by the server; its answer is withheld and the connection left
 *   open, silent, so only the client's own timeout (`socketTimeoutMS`) ends the wait. Sent on
 *   rather than kept: a client cannot tell a command lost on its way from one whose answer was,
 *   and the one that ran is the harder case (what it wrote is there when the client gives up).
 */
export type WireFaultKind = 'error' | 'drop' | 'hang' | { writeErrorAt: number };

export interface WireFault {
  command: string;
  collection?: string;
  /** How many of the next matching commands it lets through first (0). */
  skip?: number;
  /** How many matching commands it hits then (1). */
  times?: number;
  fault: WireFaultKind;
}

type Doc = Record<string, unknown>;
/** An answer a fault keeps from the client: the connection closed with it, or left open and silent. */
type Withheld = 'close' | 'silent';

/** The BSON codec a relay that fails commands reads and writes them with (the driver's: `mongoose.mongo.BSON`). */
export interface WireBson {
  serialize(doc: Doc): Uint8Array;
  deserialize(bson: Uint8Array, options?: { promoteValues?: boolean }): Doc;
}

/** One OP_MSG command: its body and its document sequences, as BSON. */
export interface WireCommand {
  name: string;
  body: Buffer;
  sequences: Record<string, Buffer[]>;
}

const OP_MSG = 2013;
/** OP_MSG flag bits: a CRC-32C at the end; no answer expected (to a request) or more answers follow. */
const CHECKSUM_PRESENT = 1;
const MORE_TO_COME = 2;

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

/**
 * An OP_MSG of `sections` (each with its kind byte). A checksum the relay does not compute is
 * left out, its flag cleared; the other flags (`moreToCome`, `exhaustAllowed`) are kept.
 */
function opMsg(requestId: number, responseTo: number, sections: Uint8Array[], flags = 0): Buffer {
  const header = Buffer.alloc(20);
  header.writeInt32LE(20 + sections.reduce((sum, section) => sum + section.length, 0), 0);
  header.writeInt32LE(requestId, 4);
  header.writeInt32LE(responseTo, 8);
  header.writeInt32LE(OP_MSG, 12);
  header.writeUInt32LE((flags & ~CHECKSUM_PRESENT) >>> 0, 16);
  return Buffer.concat([header, ...sections]);
}

/** A kind-0 section: the body document. */
function bodySection(body: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([0]), body]);
}

/** A kind-1 section: a document sequence named `identifier`. */
function sequenceSection(identifier: string, documents: Buffer[]): Buffer {
  const name = Buffer.from(`${identifier}\0`);
  const size = Buffer.alloc(5);
  size[0] = 1;
  size.writeInt32LE(4 + name.length + documents.reduce((sum, doc) => sum + doc.length, 0), 1);
  return Buffer.concat([size, name, ...documents]);
}

/** The body of an OP_MSG answer (its single kind-0 section). */
function replyBody(message: Buffer): Buffer {
  return message.subarray(21, 21 + message.readInt32LE(21));
}

/** How many documents an insert carries: in its body (the Node driver) or as a document sequence. */
function documentCount(command: WireCommand, body: Doc): number {
  return Array.isArray(body.documents) ? body.documents.length : (command.sequences.documents?.length ?? 0);
}

/**
 * An insert's message with only its documents before `k`, each where the client put it: a body
 * array sliced in the body, a document sequence kept a sequence (so the body stays under its own
 * size limit), the flags kept.
 */
function insertBefore(message: Buffer, name: string, k: number, bson: WireBson): Buffer {
  const command = sectionsOf(message, name);
  const raw = { promoteValues: false };
  const body = bson.deserialize(command.body, raw);
  const sections = [
    Array.isArray(body.documents)
      ? bodySection(bson.serialize({ ...body, documents: body.documents.slice(0, k) }))
      : bodySection(command.body),
  ];
  for (const [identifier, documents] of Object.entries(command.sequences))
    sections.push(sequenceSection(identifier, identifier === 'documents' ? documents.slice(0, k) : documents));
  return opMsg(message.readInt32LE(4), message.readInt32LE(8), sections, message.readUInt32LE(16));
}

/**
 * Complete wire messages out of a stream's chunks: each one handed to `onMessage`, a partial one
 * kept for the next chunk (answers whether one is kept).
 */
function framer(onMessage: (message: Buffer) => void): (chunk: Buffer) => boolean {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 16 && pending.length >= pending.readInt32LE(0)) {
      const length = pending.readInt32LE(0);
      onMessage(pending.subarray(0, length));
      pending = pending.subarray(length);
    }
    return pending.length > 0;
  };
}

/** `record`: keep each command as sent, for `commands()` (tests only: a long run would keep them all). `bson`: needed by `failNext`. */
export async function startWireCounter(
  target: string,
  { record = false, bson }: { record?: boolean; bson?: WireBson } = {},
): Promise<WireCounter> {
  const parsed = new URL(target);
  const host = parsed.hostname || '127.0.0.1';
  const port = Number(parsed.port || 27017);
  let counts: Record<string, number> = {};
  let commands: WireCommand[] = [];
  const sockets = new Set<Socket>();
  const faults: Array<Required<WireFault>> = [];

  /**
   * The fault the next command hits, if any (and one hit fewer left on it). A command it cannot
   * be put on passes without touching it: one that expects no answer (a reply would be read as
   * the answer to the connection's next command), or an insert of too few documents for its
   * `writeErrorAt` (the client would be told of a refusal the server never made).
   */
  const faultFor = (message: Buffer, name: string): WireFaultKind | null => {
    if (!bson || !faults.some((f) => f.command === name)) return null;
    const command = sectionsOf(message, name);
    const body = bson.deserialize(command.body);
    const collection = String(body[name]);
    const fault = faults.find((f) => f.command === name && (!f.collection || f.collection === collection));
    if (!fault) return null;
    if (fault.skip > 0) {
      fault.skip -= 1;
      return null;
    }
    if (message.readUInt32LE(16) & MORE_TO_COME) return null;
    if (typeof fault.fault === 'object' && fault.fault.writeErrorAt >= documentCount(command, body)) return null;
    fault.times -= 1;
    if (fault.times <= 0) faults.splice(faults.indexOf(fault), 1);
    return fault.fault;
  };

  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    /** Answers on their way back that a fault changes, by the request they answer. */
    const answers = new Map<number, (reply: Buffer) => Withheld | Buffer>();
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    /** Sends a command on, its answer changed by `answer` (or withheld: the connection closed, or left silent). */
    const forward = (message: Buffer, answer?: (reply: Buffer) => Withheld | Buffer) => {
      if (answer) answers.set(message.readInt32LE(4), answer);
      upstream.write(message);
    };
    const onCommand = (message: Buffer) => {
      const name = commandName(message);
      if (!name || MONITORING.has(name)) return forward(message);
      counts[name] = (counts[name] ?? 0) + 1;
      if (record) commands.push(sectionsOf(message, name));
      const fault = faultFor(message, name);
      if (!fault) return forward(message);
      const requestId = message.readInt32LE(4);
      if (fault === 'error') {
        const error = { ok: 0, errmsg: `${name} failed by the wire relay`, code: 1, codeName: 'InternalError' };
        client.write(opMsg(0, requestId, [bodySection(bson!.serialize(error))]));
        return;
      }
      if (fault === 'drop') return forward(message, () => 'close');
      if (fault === 'hang') return forward(message, () => 'silent');
      const at = fault.writeErrorAt;
      const writeError = { index: at, code: 2, errmsg: `document ${at} refused by the wire relay` };
      // An insert of no documents is not one a server takes: the relay answers it.
      if (at === 0)
        return void client.write(opMsg(0, requestId, [bodySection(bson!.serialize({ ok: 1, n: 0, writeErrors: [writeError] }))]));
      // Only the documents before the refused one go to the server; the answer names it, unless
      // the server's own says they did not all go in (then it is the truth the client gets).
      forward(insertBefore(message, name, at, bson!), (reply) => {
        const answer = bson!.deserialize(replyBody(reply), { promoteValues: false });
        if (Number(answer.ok) !== 1 || answer.writeErrors !== undefined || !(Number(answer.n) >= at)) return reply;
        const changed = bodySection(bson!.serialize({ ...answer, writeErrors: [writeError] }));
        return opMsg(reply.readInt32LE(4), requestId, [changed], reply.readUInt32LE(16));
      });
    };
    const onAnswer = (message: Buffer) => {
      const answer = answers.get(message.readInt32LE(8));
      if (!answer) return client.write(message);
      answers.delete(message.readInt32LE(8));
      const changed = answer(message);
      if (changed === 'close') close();
      else if (changed !== 'silent') client.write(changed);
    };
    const frameCommands = framer(onCommand);
    client.on('data', (chunk: Buffer) => void frameCommands(chunk));
    // Answers pass as they come (a large one is not held whole) unless one is to be changed: a
    // client waits for a command's answer before its next on a connection, so a command with a
    // fault starts the answers' framing at a boundary.
    const frameAnswers = framer(onAnswer);
    let framing = false;
    upstream.on('data', (chunk: Buffer) => {
      if (answers.size === 0 && !framing) client.write(chunk);
      else framing = frameAnswers(chunk);
    });
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
    failNext: ({ command, collection = '', skip = 0, times = 1, fault }) => {
      if (!bson) throw new Error('failNext needs the relay started with `bson`');
      if (typeof fault === 'object' && (command !== 'insert' || !Number.isInteger(fault.writeErrorAt) || fault.writeErrorAt < 0))
        throw new Error(`writeErrorAt needs an insert and a whole number ≥ 0 (got ${command}, ${fault.writeErrorAt})`);
      faults.push({ command, collection, skip, times, fault });
    },
    reset: () => {
      counts = {};
      commands = [];
      // A fault left over from a test whose commands did not all come would hit the next test's.
      faults.length = 0;
    },
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

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

/**
 * The bodies of the commands among `commands` named one of `names` on `collection` (a recording
 * counter's `commands()`), as the client sent them, leaving out kit's outbox relay's sweep: its
 * read of `pendingEvents.id` runs every 5 s on each outbox source and lands whenever it does, so a
 * test pinning what a read sends must not see it. (The relay's read of one document after a write,
 * by `_id`, is not left out.)
 */
export function sentOn(commands: WireCommand[], names: readonly string[], collection: string, deserialize: (bson: Buffer) => Doc): Doc[] {
  return commands
    .filter((command) => names.includes(command.name))
    .map((command) => ({ name: command.name, body: deserialize(command.body) }))
    .filter(({ name, body }) => body[name] === collection && !JSON.stringify(body).includes('pendingEvents.id'))
    .map(({ body }) => body);
}
