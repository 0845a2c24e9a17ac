// Small network helpers the scripts and their tests share. No `import.meta` here: jest tests
// load modules of scripts/lib through SWC as CommonJS.
import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that nothing listened on a moment ago. */
export const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
