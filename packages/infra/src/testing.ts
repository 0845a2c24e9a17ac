import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type * as Jwt from 'jsonwebtoken';
import type { SignOptions } from 'jsonwebtoken';

/** The servers `npm test` (or the jest global set-up) provided. */
export function testServers(): { mongoUrl: string; amqpUrl: string } {
  const { MONGO_URL, AMQP_URL } = process.env;
  if (!MONGO_URL || !AMQP_URL) throw new Error('MONGO_URL and AMQP_URL are not set: run the tests with `npm test`');
  return { mongoUrl: MONGO_URL, amqpUrl: AMQP_URL };
}

/** A name no other run or test file uses (databases, queues). */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export interface KeyPair {
  privateKey: string;
  publicKey: string;
}

export function makeKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { privateKey, publicKey };
}

export interface TestUser {
  id: string;
  ref: string;
  role: 'buyer' | 'seller' | 'admin';
  email?: string;
  name?: string;
}

/** Signs an access token as the gateway does (RS256, issuer, audience), for service tests. */
export function signTestToken(privateKey: string, user: TestUser, options: SignOptions = {}): string {
  // Loaded by the tests that sign, not with the index `npm start`'s runner loads (≈ 9 MB resident).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const jwt = require('jsonwebtoken') as typeof Jwt;
  return jwt.sign(
    { ref: user.ref, role: user.role, email: user.email ?? `${user.id}@example.test`, name: user.name ?? 'Test User' },
    privateKey,
    { algorithm: 'RS256', subject: user.id, issuer: 'marketplace-gateway', audience: 'marketplace', expiresIn: 900, ...options },
  );
}

/** A request to a test server; the body is parsed when it is JSON. */
export interface JsonResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export async function call(
  base: string,
  method: string,
  path: string,
  options: { body?: unknown; raw?: string; headers?: Record<string, string>; token?: string } = {},
): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

export interface Listening {
  url: string;
  close: () => Promise<void>;
}

/** Serves an app (anything with `listen`) on a free loopback port. */
export async function listenOnFreePort(app: { listen: (port: number, host: string, ready: () => void) => Server }): Promise<Listening> {
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
