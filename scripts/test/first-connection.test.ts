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
const { amqplib, firstConnection, mongodb, waitingCode, whereOf } = require('../lib/deps.mjs') as {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the driver's and amqplib's types are not dependencies of the tests
  amqplib: (root: string) => { connect: (url: string, options?: object) => Promise<any> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  mongodb: (root: string) => { MongoClient: new (url: string, options?: object) => any };
  firstConnection: <T>(what: string, attempt: () => Promise<T>, options?: { waitMs?: number; log?: (line: string) => void }) => Promise<T>;
  waitingCode: (err: unknown) => string | null;
  whereOf: (url: unknown) => string;
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
    const relay = await lateRelay(mongoUrl, 2_000);
    const { MongoClient } = mongodb(root);
    const client = new MongoClient(throughPort(mongoUrl, relay.port), { serverSelectionTimeoutMS: 500 });
    const started = Date.now();
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
    const relay = await lateRelay(amqpUrl, 2_000);
    const started = Date.now();
    const connection = await amqplib(root).connect(throughPort(amqpUrl, relay.port));
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
});
