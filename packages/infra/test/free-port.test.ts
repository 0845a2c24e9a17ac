import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { freePort } from '../src/process';

// freePort picks below the kernel's ephemeral range, so a client socket of the machine cannot
// take the port between the pick and the server's bind; and what it gives can be bound.
const ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

test('ports below the ephemeral range, each one bindable, not the same twice in a row', async () => {
  const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
  for (const port of ports) {
    expect(port).toBeGreaterThanOrEqual(10_000);
    expect(port).toBeLessThan(ephemeralStart);
  }
  expect(new Set(ports).size).toBeGreaterThan(15);
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(ports[0], '127.0.0.1', resolve);
  });
  await new Promise((resolve) => server.close(resolve));
});
