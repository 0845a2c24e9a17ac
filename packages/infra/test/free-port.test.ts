import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { freePort, PORT_RESERVATIONS, RESERVATION_MS, reservePort } from '../src/process';

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

test('a port handed out is claimed machine-wide: not again here, not by another process, free again once its process is gone', async () => {
  const port = await freePort();
  const claim = join(PORT_RESERVATIONS, String(port));
  expect(readFileSync(claim, 'utf8').trim()).toBe(String(process.pid));
  expect(reservePort(port)).toBe(false);

  // Another process's pick: the claim holds while this one lives.
  const other = spawnSync(process.execPath, ['-e', otherProcess(port)], { encoding: 'utf8' });
  expect(other.stdout.trim()).toBe('false');

  // A claim whose process is gone is taken over; one older than RESERVATION_MS as well.
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  const stalePort = port + 1;
  writeFileSync(join(PORT_RESERVATIONS, String(stalePort)), `${dead.stdout}\n`);
  expect(reservePort(stalePort)).toBe(true);
  const oldPort = port + 2;
  writeFileSync(join(PORT_RESERVATIONS, String(oldPort)), `${process.ppid}\n`);
  expect(reservePort(oldPort, Date.now() + RESERVATION_MS + 1000)).toBe(true);
});

test("a process's claims are removed when it exits", () => {
  const exited = spawnSync(process.execPath, ['-e', `${requireProcess} m.freePort().then((p) => process.stdout.write(String(p)))`], {
    encoding: 'utf8',
  });
  expect(exited.status).toBe(0);
  expect(existsSync(join(PORT_RESERVATIONS, exited.stdout.trim()))).toBe(false);
});

// The compiled module, as another process of the machine loads it.
const requireProcess = `const m = require(${JSON.stringify(join(__dirname, '../dist/process.js'))});`;
const otherProcess = (port: number) => `${requireProcess} process.stdout.write(String(m.reservePort(${port})));`;
