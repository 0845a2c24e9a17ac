import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { makeKeyPair, signTestToken, type KeyPair } from './testing';

export interface BasicsDeps {
  publicKey: string;
  readiness: Array<{ name: string; check: () => boolean; required?: boolean }>;
}

/**
 * What every service answers before its own endpoints exist: health, readiness (the database
 * decides; the broker is only reported), metrics, 401 without a verified token under its prefixes, and the 404 envelope.
 * Runs inside a jest test file of the service.
 */
export function describeServiceBasics(name: string, prefixes: string[], build: (deps: BasicsDeps) => Promise<Express> | Express): void {
  describe(`${name} service basics`, () => {
    let keys: KeyPair;
    let server: Server;
    let base: string;
    let brokerUp = true;
    let databaseUp = true;

    beforeAll(async () => {
      keys = makeKeyPair();
      const app = await build({
        publicKey: keys.publicKey,
        readiness: [
          { name: 'mongo', check: () => databaseUp },
          { name: 'broker', check: () => brokerUp, required: false },
        ],
      });
      server = await new Promise<Server>((resolve) => {
        const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
      });
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    test('healthz, readyz and metrics answer', async () => {
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      // The broker away: still ready (the outbox keeps the events), and the body says so.
      brokerUp = false;
      const withoutBroker = await fetch(`${base}/readyz`);
      brokerUp = true;
      expect(withoutBroker.status).toBe(200);
      expect(await withoutBroker.json()).toMatchObject({
        success: true,
        data: { status: 'ready', checks: { mongo: 'up', broker: 'down' } },
      });
      databaseUp = false;
      const notReady = await fetch(`${base}/readyz`);
      databaseUp = true;
      expect(notReady.status).toBe(503);
      expect(await notReady.json()).toMatchObject({
        success: false,
        errors: [{ path: 'mongo', code: 'unavailable' }],
        checks: { broker: 'up' },
      });
      expect(await (await fetch(`${base}/metrics`)).text()).toContain('marketplace_http_request_duration_seconds');
    });

    test.each(prefixes)('%s needs a verified token', async (prefix) => {
      const anonymous = await fetch(`${base}${prefix}`);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toMatchObject({ success: false, errors: [{ code: 'unauthenticated' }] });
      const forged = await fetch(`${base}${prefix}`, {
        headers: {
          authorization: `Bearer ${signTestToken(makeKeyPair().privateKey, { id: 'u', ref: 'MKT-USR-AAAAAAAA', role: 'admin' })}`,
          'x-user-id': 'u',
        },
      });
      expect(forged.status).toBe(401);
    });

    test('an unknown path with a valid token is the 404 envelope', async () => {
      const token = signTestToken(keys.privateKey, { id: 'u', ref: 'MKT-USR-AAAAAAAA', role: 'buyer' });
      const res = await fetch(`${base}${prefixes[0]}/no-such-endpoint`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ success: false, errors: [{ code: 'not_found' }] });
    });
  });
}
