import http, { type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import mongoose from 'mongoose';
import pino from 'pino';
import { startComponent, stopRuntime } from '@mkt/kit/runtime';
import type { Bus } from '@mkt/kit/bus';
import type { Logger } from '@mkt/kit/logger';
import { makeKeyPair, testEnv, testServers, type KeyPair } from './support';
import { gatewayService } from '../src/composition';
import { loadConfig } from '../src/config';
import type { Identity } from '../src/application/identity.use-cases';
import type { GatewayModels } from '../src/db/models';

export const log = pino({ level: 'silent' });
/** This file's database and broker namespace. */
export const env = testEnv('gateway');

/** A stand-in service: answers with what it received; `/__slow` waits, `/__broken` hangs up, `/__csp` sets its own CSP. */
export function startUpstream(name: string): Promise<Server> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.url?.includes('__broken')) return req.socket.destroy();
      const answer = () => {
        const own: http.OutgoingHttpHeaders = req.url?.includes('__csp') ? { 'content-security-policy': "default-src 'none'" } : {};
        if (req.url?.includes('__cookies')) own['set-cookie'] = ['a=1; Path=/', 'b=2; Path=/'];
        res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': String(req.headers['x-request-id']), ...own });
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
  /** This gateway's models, on its own database handle. */
  models: GatewayModels;
  bus: Bus;
  close: () => Promise<void>;
}

/** The gateway as main.ts composes it, on a free port, against the real servers. */
export async function startGateway(
  overrides: Record<string, string>,
  keys: KeyPair = makeKeyPair(),
  logger: Logger = log,
): Promise<Gateway> {
  const { mongoUrl, amqpUrl } = testServers();
  const config = loadConfig({
    MONGO_URL: mongoUrl,
    AMQP_URL: amqpUrl,
    JWT_PRIVATE_KEY: keys.privateKey,
    JWT_PUBLIC_KEY: keys.publicKey,
    // Cheap hashes keep the tests quick; the login-stall test sets production strength.
    PASSWORD_HASH_MEMORY_KIB: '1024',
    PASSWORD_HASH_TIME_COST: '1',
    METRICS_PORT: '0',
    PORT: '0',
    BUS_NAMESPACE: env.namespace,
    ...overrides,
  });
  const gateway = gatewayService(config, logger);
  // As main.ts does: the admin is seeded before the port opens (the definition's beforeListen).
  const started = await startComponent(gateway.definition, env.dbName);
  const { identity, models } = gateway.parts;
  return { url: started.url, keys, identity, models, bus: started.runtime.bus, close: () => stopRuntime(started) };
}

export async function disconnectDatabase(): Promise<void> {
  await mongoose.disconnect();
}

/** Sends a request exactly as written (no URL normalization): `/a/../b`, absolute-form targets. */
export function rawRequest(
  url: string,
  requestLine: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      const lines = [
        `${requestLine} HTTP/1.1`,
        `host: ${hostname}:${port}`,
        'connection: close',
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ];
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('error', reject);
    socket.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
  });
}
