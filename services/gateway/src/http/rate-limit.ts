import type { IncomingMessage } from 'node:http';
import { isIPv6 } from 'node:net';
import { ipKeyGenerator } from 'express-rate-limit';
import type { RequestHandler } from 'express';
import { bearerToken, verifyAccessToken, type TokenKeys } from '@mkt/kit/http';
import type { SharedLimit } from './shared-limit';
import { trustedHopValue } from './trusted-hops';

export { trustedHopValue };

/**
 * The client's address: the socket's, or with `hops` trusted proxies in front, the address the
 * outermost of them saw (X-Forwarded-For read from the right) — express's `trust proxy` with a
 * hop count. A client cannot choose it by sending its own X-Forwarded-For.
 */
export function clientAddress(req: IncomingMessage, hops: number): string {
  const socketAddress = req.socket.remoteAddress ?? 'unknown';
  if (hops === 0) return socketAddress;
  return trustedHopValue(req.headers['x-forwarded-for'], hops) ?? socketAddress;
}

/** IPv4 as is (also when IPv4-mapped); IPv6 by its /56, as express-rate-limit keys it. */
export function addressKey(address: string): string {
  if (address.startsWith('::ffff:') && !address.includes(':', 7)) return address.slice(7);
  return isIPv6(address) ? ipKeyGenerator(address) : address;
}

/**
 * The per-user key of a request: the `sub` of a token that verifies (an invalid token counts as
 * nobody; the services refuse it). Verified tokens are remembered until they expire, so a
 * client's steady stream of requests costs one RS256 verification, not one per request.
 */
export class TokenUsers {
  private readonly known = new Map<string, { user: string; expiresAt: number }>();

  constructor(
    private readonly keys: TokenKeys,
    private readonly maxEntries = 10_000,
  ) {}

  /** At once for a token verified before (the usual case); a promise when it must be verified. */
  userOf(authorization: string | undefined, now = Date.now()): string | null | Promise<string | null> {
    const token = bearerToken(authorization);
    if (!token) return null;
    const cached = this.known.get(token);
    if (cached && cached.expiresAt > now) return cached.user;
    return this.verify(token);
  }

  private async verify(token: string): Promise<string | null> {
    try {
      const user = await verifyAccessToken(token, this.keys);
      const expiresAt = expiryOf(token);
      if (this.known.size >= this.maxEntries) this.known.clear();
      this.known.set(token, { user: `user:${user.id}`, expiresAt });
      return `user:${user.id}`;
    } catch {
      return null;
    }
  }
}

function expiryOf(token: string): number {
  const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp?: number };
  return (payload.exp ?? 0) * 1000;
}

/**
 * Registrations per client address and hour (an express middleware for that one route); null
 * limit: off. A taken email is answered with 409 (the caller gets a session at once, so there
 * is no answer that would not tell); this limit keeps that from becoming an email-enumeration
 * service.
 */
export function limitRegistrations(limit: SharedLimit | null, trustProxyHops: number): RequestHandler {
  if (!limit) return (_req, _res, next) => next();
  return (req, res, next) => {
    if (req.method !== 'POST') return next();
    Promise.resolve(limit.take(addressKey(clientAddress(req, trustProxyHops)))).then(({ headers, refused }) => {
      res.setHeader('ratelimit-policy', headers.policy);
      res.setHeader('ratelimit', headers.value);
      next(refused ?? undefined);
    }, next);
  };
}
