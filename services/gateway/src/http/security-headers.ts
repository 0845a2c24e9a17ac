import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';

export type HeaderList = ReadonlyArray<readonly [string, string]>;

/**
 * helmet's headers, worked out once at start instead of by helmet's middleware chain on every
 * request: helmet is run against a recorder and what it set is kept. The same headers as
 * `app.use(helmet())`, none lost and none invented. An upstream's own header of the same name
 * (the wallet's checkout page has its own Content-Security-Policy) still wins, as before.
 */
export function securityHeaders(): HeaderList {
  const recorded = new Map<string, string>();
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => recorded.set(name.toLowerCase(), String(value)),
    removeHeader: (name: string) => recorded.delete(name.toLowerCase()),
    getHeader: (name: string) => recorded.get(name.toLowerCase()),
  };
  let done = false;
  helmet()({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err;
    done = true;
  });
  if (!done) throw new Error('helmet did not finish synchronously');
  return [...recorded];
}

/** Sets a precomputed header list on a response. */
export function setHeaders(res: ServerResponse, headers: HeaderList): void {
  for (const [name, value] of headers) res.setHeader(name, value);
}
