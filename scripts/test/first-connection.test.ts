import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect as netConnect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';

// The operations tools' first connection (scripts/lib/deps.mjs) against the tests' real MongoDB
// and RabbitMQ: an address that starts answering only after 2 s (as a Job's address a
// NetworkPolicy admits late) is reached; a certificate or credentials refused fail at once.
const root = join(__dirname, '..', '..');
const mongoUrl = process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27017';
const amqpUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
/** What this test uses of the built infra (packages/infra: the tests' certificates). */
interface Infra {
  makeTestCertificates(): Promise<{ caFile: string; otherCaFile: string; certFile: string; keyFile: string; remove(): void }>;
}
/* eslint-disable @typescript-eslint/no-require-imports -- the modules under test (ES modules SWC loads as CommonJS) and the built infra, as the other tools' tests load them */
const infra = require(join(root, 'packages', 'infra', 'dist', 'index.js')) as Infra;
const { amqplib, closedByServer, firstConnection, mongodb, mongoUsesTls, waitingCode, whereOf } = require('../lib/deps.mjs') as {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the driver's and amqplib's types are not dependencies of the tests
  amqplib: (root: string) => { connect: (url: string, options?: object) => Promise<any> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  mongodb: (root: string) => { MongoClient: new (url: string, options?: object) => any };
  firstConnection: <T>(what: string, attempt: () => Promise<T>, options?: { waitMs?: number; log?: (line: string) => void }) => Promise<T>;
  waitingCode: (err: unknown) => string | null;
  whereOf: (url: unknown) => string;
  mongoUsesTls: (url: unknown, options: Record<string, unknown> | undefined) => boolean;
  closedByServer: (err: unknown) => boolean;
};
const { freePort } = require('../lib/net.mjs') as { freePort: () => Promise<number> };
/* eslint-enable @typescript-eslint/no-require-imports */

/** host:port of a URL (the first host). */
function addressOf(url: string): { host: string; port: number } {
  const { hostname, port } = new URL(url.replace(/^mongodb(\+srv)?:/, 'http:').replace(/^amqps?:/, 'http:'));
  return { host: hostname, port: Number(port) };
}

/** `url` with its host and port replaced by 127.0.0.1:`port`, its credentials and path kept. */
function throughPort(url: string, port: number): string {
  return url.replace(/^([a-z+]+:\/\/(?:[^@/]*@)?)[^/?]+/i, `$1127.0.0.1:${port}`);
}

/** A relay to `target` on a free port that starts listening only after `delayMs`. */
async function lateRelay(target: string, delayMs: number) {
  const { host, port } = addressOf(target);
  const listenOn = await freePort();
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = netConnect(port, host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  const timer = setTimeout(() => server.listen(listenOn, '127.0.0.1'), delayMs);
  return {
    port: listenOn,
    stop: () =>
      new Promise<void>((resolve) => {
        clearTimeout(timer);
        for (const s of sockets) s.destroy();
        if (server.listening) server.close(() => resolve());
        else resolve();
      }),
  };
}

const savedWait = process.env.OPS_CONNECT_WAIT_MS;
beforeAll(() => {
  process.env.OPS_CONNECT_WAIT_MS = '30000';
});
afterAll(() => {
  if (savedWait === undefined) delete process.env.OPS_CONNECT_WAIT_MS;
  else process.env.OPS_CONNECT_WAIT_MS = savedWait;
});

describe('a first connection to an address that answers only after 2 s', () => {
  test('MongoDB: reached (each try one short server selection), and the client works', async () => {
    // The driver loaded first: the 2 s count from the relay's creation, which comes after `started`.
    const { MongoClient } = mongodb(root);
    const started = Date.now();
    const relay = await lateRelay(mongoUrl, 2_000);
    const client = new MongoClient(throughPort(mongoUrl, relay.port), { serverSelectionTimeoutMS: 500 });
    try {
      await client.connect();
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
      expect(await client.db('admin').command({ ping: 1 })).toMatchObject({ ok: 1 });
    } finally {
      await client.close();
      await relay.stop();
    }
  }, 30_000);

  test('RabbitMQ: reached, and the connection works', async () => {
    const { connect } = amqplib(root);
    const started = Date.now();
    const relay = await lateRelay(amqpUrl, 2_000);
    const connection = await connect(throughPort(amqpUrl, relay.port));
    try {
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
      const channel = await connection.createChannel();
      await channel.close();
    } finally {
      await connection.close();
      await relay.stop();
    }
  }, 30_000);

  test('`dlq list` run while the broker’s address is not admitted yet: it waits, then answers', async () => {
    const relay = await lateRelay(amqpUrl, 2_000);
    try {
      const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(
          process.execPath,
          [join(root, 'scripts', 'dlq.mjs'), 'list', '--json'],
          {
            env: {
              ...process.env,
              AMQP_URL: throughPort(amqpUrl, relay.port),
              BUS_NAMESPACE: `firstconn${randomBytes(4).toString('hex')}`,
            },
            timeout: 30_000,
          },
          (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
        ),
      );
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ total: 0 });
      expect(run.stderr).toMatch(/\[connect\] RabbitMQ at amqp:\/\/127\.0\.0\.1:\d+.*: ECONNREFUSED; trying again/);
      // The password of the URL is never said.
      const password = new URL(amqpUrl).password;
      if (password) expect(run.stderr).not.toContain(password);
    } finally {
      await relay.stop();
    }
  }, 40_000);
});

describe('what is never tried again', () => {
  let certs: Awaited<ReturnType<Infra['makeTestCertificates']>>;
  let tlsServer: Server;
  let tlsPort: number;
  beforeAll(async () => {
    certs = await infra.makeTestCertificates();
    tlsServer = createTlsServer({ cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) }, (socket) => socket.destroy());
    tlsServer.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    tlsPort = (tlsServer.address() as { port: number }).port;
  }, 60_000);
  afterAll(async () => {
    await new Promise((resolve) => tlsServer?.close(resolve));
    certs?.remove();
  });

  test('MongoDB: a server certificate another CA signed fails at once, saying so', async () => {
    const { MongoClient } = mongodb(root);
    const client = new MongoClient(`mongodb://127.0.0.1:${tlsPort}/?tls=true`, {
      tlsCAFile: certs.otherCaFile,
      serverSelectionTimeoutMS: 10_000,
    });
    const started = Date.now();
    await expect(client.connect()).rejects.toThrow(/certificate was refused.*not tried again/s);
    expect(Date.now() - started).toBeLessThan(5_000);
    await client.close();
  }, 30_000);

  test('RabbitMQ: a certificate another CA signed, and a wrong password, fail at once, saying so', async () => {
    let started = Date.now();
    await expect(amqplib(root).connect(`amqps://127.0.0.1:${tlsPort}`, { ca: [readFileSync(certs.otherCaFile)] })).rejects.toThrow(
      /certificate was refused.*not tried again/s,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    const wrong = new URL(amqpUrl);
    wrong.username = wrong.username || 'guest';
    wrong.password = `wrong-${randomBytes(4).toString('hex')}`;
    started = Date.now();
    const refused = amqplib(root).connect(wrong.toString());
    await expect(refused).rejects.toThrow(/credentials were refused.*not tried again/s);
    await expect(refused).rejects.not.toThrow(wrong.password);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 30_000);
});

describe('the rule, without servers', () => {
  const coded = (code: string | number, message = 'failed') => Object.assign(new Error(message), { code });

  test('network answers are waited for; certificates, credentials and the rest are not', () => {
    for (const code of ['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']) expect(waitingCode(coded(code))).toBe(code);
    expect(waitingCode(new Error('connect ETIMEDOUT'))).toBe('ETIMEDOUT'); // amqplib's own socket timeout
    expect(waitingCode(new Error('x', { cause: coded('ECONNREFUSED') }))).toBe('ECONNREFUSED');
    // A MongoDB server selection: the last error of each server it tried.
    const selection = Object.assign(new Error('Server selection timed out'), {
      reason: { servers: new Map([['h:1', { error: new Error('net', { cause: coded('EHOSTUNREACH') }) }]]) },
    });
    expect(waitingCode(selection)).toBe('EHOSTUNREACH');
    expect(waitingCode(coded('UNABLE_TO_VERIFY_LEAF_SIGNATURE'))).toBeNull();
    expect(waitingCode(coded('ERR_TLS_CERT_ALTNAME_INVALID'))).toBeNull();
    expect(waitingCode(coded(18, 'Authentication failed.'))).toBeNull();
    expect(waitingCode(new Error('Handshake terminated by server: 403 (ACCESS-REFUSED)'))).toBeNull();
    expect(waitingCode(new Error('x', { cause: coded('ECONNREFUSED') }))).not.toBeNull();
    expect(waitingCode(Object.assign(coded('ECONNREFUSED'), { cause: coded('CERT_HAS_EXPIRED') }))).toBeNull();
  });

  test('tries again within the wait, and no longer; what is not a network answer is tried once', async () => {
    const log: string[] = [];
    let calls = 0;
    const flaky = async () => {
      calls += 1;
      if (calls < 3) throw coded('ECONNREFUSED');
      return 'connected';
    };
    expect(await firstConnection('the server', flaky, { waitMs: 10_000, log: (line) => log.push(line) })).toBe('connected');
    expect(calls).toBe(3);
    expect(log).toEqual(['[connect] the server: ECONNREFUSED; trying again for up to 10 s']);

    const started = Date.now();
    await expect(
      firstConnection('the server', () => Promise.reject(coded('ETIMEDOUT')), { waitMs: 1_000, log: () => undefined }),
    ).rejects.toThrow(/not reachable \(ETIMEDOUT\)/);
    expect(Date.now() - started).toBeLessThan(2_500);

    calls = 0;
    const certificate = () => {
      calls += 1;
      return Promise.reject(coded('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'));
    };
    await expect(firstConnection('the server', certificate, { waitMs: 10_000, log: () => undefined })).rejects.toThrow(
      /certificate was refused/,
    );
    expect(calls).toBe(1);
  });

  test('a bad OPS_CONNECT_WAIT_MS is said; messages name a server without its credentials', () => {
    const { MongoClient } = mongodb(root);
    process.env.OPS_CONNECT_WAIT_MS = 'soon';
    try {
      expect(() => amqplib(root).connect('amqp://127.0.0.1:1')).toThrow(/OPS_CONNECT_WAIT_MS/);
      expect(typeof MongoClient).toBe('function');
    } finally {
      process.env.OPS_CONNECT_WAIT_MS = '30000';
    }
    expect(whereOf('mongodb://user:secret@db-0.db:27017,db-1.db:27017/wallet?authSource=admin')).toBe(
      'mongodb://db-0.db:27017,db-1.db:27017/wallet',
    );
    expect(whereOf('amqps://svc:secret@rabbit:5671')).toBe('amqps://rabbit:5671');
  });

  test('a password holding `@` (as amqplib and URL read it: up to the last `@`) never reaches a message', () => {
    expect(whereOf('amqp://ops:s3cr@t-tail@rabbit')).toBe('amqp://rabbit');
    expect(whereOf('amqp://ops:s3cr@t-tail@rabbit:5672/%2F?heartbeat=30')).toBe('amqp://rabbit:5672/%2F');
    expect(whereOf('mongodb://ops:p@ss@db-0.db:27017,db-1.db:27017/wallet?authSource=admin')).toBe(
      'mongodb://db-0.db:27017,db-1.db:27017/wallet',
    );
    expect(whereOf('mongodb+srv://ops:p%40ss@cluster.example/wallet')).toBe('mongodb+srv://cluster.example/wallet');
    // What URL cannot parse, or would leave a part of the password in the path, is not named at all.
    for (const url of ['amqp://ops:1/b@rabbit', 'mongodb://ops:12,x/y@h1,h2', 'not a url', 'amqp://ops:s3cr@t@rab bit'])
      expect(whereOf(url)).toBe('the configured server');
  });
});

describe('a MongoDB server that closes a plain connection (one that requires TLS)', () => {
  const coded = (code: string, message: string) => Object.assign(new Error(message), { code });
  /** A server on a free port that resets (or closes) every connection as soon as it is made. */
  async function closingServer(how: 'reset' | 'close') {
    const port = await freePort();
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      if (how === 'reset') socket.resetAndDestroy();
      else socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return { port, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  async function failureOf(url: string): Promise<string> {
    const { MongoClient } = mongodb(root);
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 300 });
    process.env.OPS_CONNECT_WAIT_MS = '1000';
    try {
      await client.connect();
      throw new Error('connected');
    } catch (err) {
      return (err as Error).message;
    } finally {
      process.env.OPS_CONNECT_WAIT_MS = '30000';
      await client.close().catch(() => undefined);
    }
  }

  test.each(['reset', 'close'] as const)('connection %s: the final message says the server may require TLS', async (how) => {
    const server = await closingServer(how);
    try {
      const message = await failureOf(`mongodb://ops:secret@127.0.0.1:${server.port}/wallet`);
      expect(message).toContain(`MongoDB at mongodb://127.0.0.1:${server.port}/wallet`);
      expect(message).toMatch(/may require TLS.*MONGO_TLS_CA_FILE.*tls=true/);
      expect(message).not.toContain('secret');
    } finally {
      await server.stop();
    }
  });

  test('a URL with TLS already is not told to use it', async () => {
    const server = await closingServer('reset');
    try {
      expect(await failureOf(`mongodb://127.0.0.1:${server.port}/wallet?tls=true`)).not.toMatch(/may require TLS/);
    } finally {
      await server.stop();
    }
  });

  test('the rule, without servers: which URL speaks TLS, which failure is a closed connection', () => {
    expect(mongoUsesTls('mongodb://db:27017/wallet', undefined)).toBe(false);
    expect(mongoUsesTls('mongodb://db:27017/wallet?tls=true', undefined)).toBe(true);
    expect(mongoUsesTls('mongodb://db:27017/wallet?ssl=TRUE', undefined)).toBe(true);
    expect(mongoUsesTls('mongodb+srv://cluster.example/wallet', undefined)).toBe(true);
    expect(mongoUsesTls('mongodb+srv://cluster.example/wallet?tls=false', undefined)).toBe(false);
    expect(mongoUsesTls('mongodb://db:27017/wallet', { tls: true, tlsCAFile: '/ca.pem' })).toBe(true);
    expect(closedByServer(coded('ECONNRESET', 'read ECONNRESET'))).toBe(true);
    expect(closedByServer(new Error('outer', { cause: new Error('connection 1 to 127.0.0.1:27017 closed') }))).toBe(true);
    expect(closedByServer(coded('ECONNREFUSED', 'connect ECONNREFUSED'))).toBe(false);
  });
});
