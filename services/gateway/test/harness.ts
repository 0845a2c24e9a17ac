import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import mongoose from 'mongoose';
import pino from 'pino';
import { Bus, OutboxRelay, connectMongo, ensureIndexes, isMongoReady } from '@mkt/kit';
import { listenOnFreePort, makeKeyPair, testServers, uniqueName, type KeyPair } from './support';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { RefreshToken } from '../src/db/refresh-token.model';
import { User } from '../src/db/user.model';
import { Identity } from '../src/domain/identity';

export const log = pino({ level: 'silent' });

/** A stand-in service: answers with what it received; `/__slow` waits, `/__broken` hangs up. */
export function startUpstream(name: string): Promise<Server> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.url?.includes('__broken')) return req.socket.destroy();
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': String(req.headers['x-request-id']) });
        res.end(JSON.stringify({ success: true, data: { service: name, method: req.method, url: req.url, headers: req.headers, body } }));
      };
      if (req.url?.includes('__slow')) setTimeout(answer, 1_500);
      else answer();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

export function urlOf(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export interface Gateway {
  url: string;
  keys: KeyPair;
  identity: Identity;
  bus: Bus;
  close: () => Promise<void>;
}

export async function connectDatabase(): Promise<void> {
  if (isMongoReady()) return;
  await connectMongo({ url: testServers().mongoUrl, dbName: uniqueName('gateway'), log });
  await ensureIndexes([User, RefreshToken]);
}

/** The gateway app as main.ts builds it, on a free port, against the real servers. */
export async function startGateway(env: Record<string, string>, keys: KeyPair = makeKeyPair()): Promise<Gateway> {
  await connectDatabase();
  const { mongoUrl, amqpUrl } = testServers();
  const config = loadConfig({
    MONGO_URL: mongoUrl,
    AMQP_URL: amqpUrl,
    JWT_PRIVATE_KEY: keys.privateKey,
    JWT_PUBLIC_KEY: keys.publicKey,
    BCRYPT_ROUNDS: '4',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const bus = new Bus({ url: amqpUrl, log });
  await bus.start();
  const outbox = new OutboxRelay({ bus, log, sources: [{ name: 'users', model: User }] });
  const signing = { privateKey: config.JWT_PRIVATE_KEY, publicKey: config.JWT_PUBLIC_KEY, keyId: config.JWT_KEY_ID, accessTtlSeconds: 900 };
  const identity = new Identity({ keys: signing, refreshTtlDays: 30, bcryptRounds: 4, referencePrefix: 'MKT' }, outbox, log);
  const readiness = [
    { name: 'mongo', check: isMongoReady },
    { name: 'broker', check: () => bus.isConnected() },
  ];
  const app = createApp({ config, runtime: { log, readiness }, identity, keys: signing });
  const server = await listenOnFreePort(app);
  return {
    url: server.url,
    keys,
    identity,
    bus,
    close: async () => {
      await server.close();
      await bus.close();
    },
  };
}

export async function disconnectDatabase(): Promise<void> {
  await mongoose.disconnect();
}
