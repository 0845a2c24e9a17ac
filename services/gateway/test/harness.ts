import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import mongoose from 'mongoose';
import pino from 'pino';
import { startComponent, stopRuntime, type Bus } from '@mkt/kit';
import { makeKeyPair, testServers, uniqueName, type KeyPair } from './support';
import { gatewayService } from '../src/composition';
import { loadConfig } from '../src/config';
import type { Identity } from '../src/domain/identity';

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

/** The gateway as main.ts composes it, on a free port, against the real servers. */
export async function startGateway(env: Record<string, string>, keys: KeyPair = makeKeyPair()): Promise<Gateway> {
  const { mongoUrl, amqpUrl } = testServers();
  const config = loadConfig({
    MONGO_URL: mongoUrl,
    AMQP_URL: amqpUrl,
    JWT_PRIVATE_KEY: keys.privateKey,
    JWT_PUBLIC_KEY: keys.publicKey,
    BCRYPT_ROUNDS: '4',
    PORT: '0',
    ...env,
  });
  const gateway = gatewayService(config, log);
  const started = await startComponent(gateway.options, uniqueName('gateway'));
  return { url: started.url, keys, identity: gateway.identity(), bus: started.runtime.bus, close: () => stopRuntime(started) };
}

export async function disconnectDatabase(): Promise<void> {
  await mongoose.disconnect();
}
