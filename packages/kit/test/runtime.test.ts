import { createServer, type Server } from 'node:http';
import express from 'express';
import pino from 'pino';
import { startRuntime } from '@mkt/kit';
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
});
