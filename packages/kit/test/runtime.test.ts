import { createServer, type Server } from 'node:http';
import express from 'express';
import pino from 'pino';
import { parseConfig, serviceEnv, startRuntime } from '@mkt/kit';
import { freePort, testServers } from '@mkt/infra';

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
      name: 'squatted',
      config: { PORT: port, AMQP_URL: testServers().amqpUrl },
      log: pino({ level: 'silent' }),
      createApp: () => express(),
      brokerTimeoutMs: 30_000,
    });
    await expect(start).rejects.toThrow(`squatted cannot listen on port ${port}: EADDRINUSE`);
  });

  test('HOST binds that address only (npm start: 127.0.0.1, never every interface of a laptop)', async () => {
    const env = { MONGO_URL: 'unused', AMQP_URL: testServers().amqpUrl, JWT_PUBLIC_KEY: 'unused', HOST: '127.0.0.1' };
    const started = await startRuntime({
      name: 'local',
      config: parseConfig(serviceEnv(0), env),
      log: pino({ level: 'silent' }),
      createApp: () => express(),
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
