import net, { type AddressInfo, type Socket } from 'node:net';

/**
 * A tiny L4 round-robin TCP proxy standing in for a Kubernetes Service in front of a service's
 * replicas: each new connection goes to the next backend; a backend whose connection is refused
 * (a killed instance) is skipped for the next one after it, each backend tried once. Connections
 * already open to an instance that dies break, as they would behind a real Service.
 */
export interface Balancer {
  url: string;
  /** Connections sent to each backend port. */
  connections: Map<number, number>;
  close: () => Promise<void>;
}

export async function startBalancer(ports: number[]): Promise<Balancer> {
  let next = 0;
  const open = new Set<Socket>();
  const connections = new Map<number, number>();
  // A refused connection tries the backends after its own first, in order: taken from the shared
  // turn instead, concurrent connections could send one to the dead backend again and again, and
  // close it with the live one never tried (a client then sees a connection closed unanswered).
  const connect = (client: Socket, first: number, tried: number) => {
    if (tried >= ports.length) return client.destroy();
    const port = ports[(first + tried) % ports.length]!;
    const upstream = net.connect(port, '127.0.0.1');
    open.add(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      connections.set(port, (connections.get(port) ?? 0) + 1);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    upstream.on('error', () => {
      if (!connected) connect(client, first, tried + 1);
      else client.destroy();
    });
    upstream.on('close', () => {
      open.delete(upstream);
      if (connected) client.destroy();
    });
    client.on('close', () => upstream.destroy());
  };
  const server = net.createServer((client) => {
    open.add(client);
    client.pause();
    client.on('error', () => undefined);
    client.on('close', () => open.delete(client));
    connect(client, next++ % ports.length, 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections,
    close: () =>
      new Promise((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
