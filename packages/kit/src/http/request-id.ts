import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

export const REQUEST_ID_HEADER = 'x-request-id';
const acceptable = /^[\w\-.:]{1,128}$/;

/** An id sent in `header` when it is sane (bounded, safe in a log line); undefined otherwise. */
export function saneIdHeader(req: IncomingMessage, header: string): string | undefined {
  const given = req.headers[header];
  const value = Array.isArray(given) ? given[0] : given;
  return value && acceptable.test(value) ? value : undefined;
}

/** Keeps a client's request id when it is sane, else makes one. */
export function requestIdOf(req: IncomingMessage): string {
  return saneIdHeader(req, REQUEST_ID_HEADER) ?? randomUUID();
}

/** The id pino-http gave the request (the client's x-request-id when sane): events carry it. */
export function correlationIdOf(req: IncomingMessage): string {
  const id = (req as IncomingMessage & { id?: unknown }).id;
  return id === undefined || id === null ? randomUUID() : String(id);
}

/**
 * The header the gateway sets on every request it forwards: the client's address as it saw it
 * (whatever a client sent under that name is replaced). Audit entries record it.
 */
export const CLIENT_ADDRESS_HEADER = 'x-client-address';

/** The client's address the gateway forwarded, when it is an IP address; null otherwise. */
export function clientAddressOf(req: IncomingMessage): string | null {
  const given = req.headers[CLIENT_ADDRESS_HEADER];
  const value = Array.isArray(given) ? given[0] : given;
  return value && isIP(value) !== 0 ? value : null;
}

/** Where an admin's request came from: its id (the gateway's `x-request-id`) and the client's address. */
export function adminRequestOf(req: IncomingMessage): { requestId: string; clientAddress: string | null } {
  return { requestId: correlationIdOf(req), clientAddress: clientAddressOf(req) };
}
