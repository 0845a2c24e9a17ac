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
  reset(): void;
  stop(): Promise<void>;
}

const OP_MSG = 2013;
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

export async function startWireCounter(target: string): Promise<WireCounter> {
  const parsed = new URL(target);
  const host = parsed.hostname || '127.0.0.1';
  const port = Number(parsed.port || 27017);
  let counts: Record<string, number> = {};
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
        if (name && !MONITORING.has(name)) counts[name] = (counts[name] ?? 0) + 1;
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
    reset: () => {
      counts = {};
    },
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
