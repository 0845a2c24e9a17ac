import { createServer, type Server } from 'node:http';
import express from 'express';
import pino from 'pino';
import mongoose from 'mongoose';
import { createDatabase, openDatabase } from '@mkt/kit/db';
import { createRuntime, parseConfig, serviceEnv, stopRuntime } from '@mkt/kit/runtime';
import { createService } from '@mkt/kit/http';
import { startRuntime } from '../src/runtime';
import { freePort, testServers, uniqueName } from '@mkt/infra';

describe('startRuntime', () => {
  let squatter: Server;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '0.0.0.0', resolve));
  });
  afterAll(() => new Promise((resolve) => squatter.close(resolve)));

  test('a port already in use fails the start with a message naming the service and the port', async () => {
    const start = startRuntime({
      runtime: createRuntime({
        name: 'squatted',
        config: { AMQP_URL: testServers().amqpUrl },
        log: pino({ level: 'silent' }),
        db: createDatabase(),
      }),
      config: { PORT: port },
      app: express(),
      brokerTimeoutMs: 30_000,
    });
    await expect(start).rejects.toThrow(`squatted cannot listen on port ${port}: EADDRINUSE`);
  });

  test('HOST binds that address only (npm start: 127.0.0.1, never every interface of a laptop)', async () => {
    const env = { MONGO_URL: 'unused', AMQP_URL: testServers().amqpUrl, JWT_PUBLIC_KEY: 'unused', HOST: '127.0.0.1' };
    const config = parseConfig(serviceEnv(0), env);
    const started = await startRuntime({
      runtime: createRuntime({ name: 'local', config, log: pino({ level: 'silent' }), db: createDatabase() }),
      config,
      app: express(),
      brokerTimeoutMs: 30_000,
    });
    try {
      expect(started.server.address()).toMatchObject({ address: '127.0.0.1' });
    } finally {
      await new Promise((resolve) => started.server.close(resolve));
      for (const close of started.closers) await close();
    }
  });
});

describe('readiness', () => {
  test('a broker not reachable yet does not keep the service from being ready: the database decides, the broker is reported', async () => {
    const { mongoUrl } = testServers();
    await openDatabase(mongoose.connection, { url: mongoUrl, dbName: uniqueName('kit_ready'), log: pino({ level: 'silent' }) });
    const log = pino({ level: 'silent' });
    const runtime = createRuntime({
      name: 'no-broker-yet',
      config: { AMQP_URL: `amqp://127.0.0.1:${await freePort()}` },
      log,
      db: mongoose.connection,
    });
    const started = await startRuntime({
      runtime,
      config: { PORT: 0, HOST: '127.0.0.1' },
      app: createService({ name: 'no-broker-yet', log, readiness: runtime.readiness, routes: () => undefined }),
    });
    try {
      const res = await fetch(`${started.url}/readyz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        success: true,
        data: { status: 'ready', checks: { process: 'up', mongo: 'up', broker: 'down' } },
      });
      started.startDraining();
      const draining = await fetch(`${started.url}/readyz`);
      expect(draining.status).toBe(503);
      expect(await draining.json()).toMatchObject({ success: false, errors: [{ path: 'process' }], checks: { process: 'draining' } });
    } finally {
      await stopRuntime(started);
      await mongoose.disconnect();
    }
  });
});
