import type { RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { bearerToken, PayloadTooLarge, RateLimited, verifyAccessToken } from '@mkt/kit';

/** Identity comes from a verified token only: inbound `x-user-*` headers never pass. */
export function stripIdentityHeaders(): RequestHandler {
  return (req, _res, next) => {
    for (const name of Object.keys(req.headers)) if (name.startsWith('x-user-')) delete req.headers[name];
    next();
  };
}

/** Refuses a body whose declared length is over the limit before anything is streamed. */
export function limitBodySize(maxBytes: number): RequestHandler {
  return (req, _res, next) => {
    const length = Number(req.headers['content-length'] ?? 0);
    next(length > maxBytes ? new PayloadTooLarge(maxBytes) : undefined);
  };
}

function limiter(perWindow: number, key: (req: Parameters<RequestHandler>[0]) => string | null, windowMs = 60_000): RequestHandler {
  return rateLimit({
    windowMs,
    limit: perWindow,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    skip: (req) => key(req) === null,
    keyGenerator: (req) => key(req)!,
    handler: (req, _res, next) => {
      const resetTime = (req as unknown as { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      next(new RateLimited(resetTime ? (resetTime.getTime() - Date.now()) / 1000 : 60));
    },
  });
}

/** Per client address; 0 turns it off. */
export function limitPerIp(perMinute: number): RequestHandler {
  if (perMinute === 0) return (_req, _res, next) => next();
  return limiter(perMinute, (req) => ipKeyGenerator(req.ip ?? 'unknown'));
}

/**
 * Registrations per client address and hour; 0 turns it off. A taken email is answered with
 * 409 (the caller gets a session at once, so there is no answer that would not tell), and this
 * limit is what keeps that from becoming an email-enumeration service.
 */
export function limitRegistrations(perHour: number): RequestHandler {
  if (perHour === 0) return (_req, _res, next) => next();
  const limit = limiter(perHour, (req) => ipKeyGenerator(req.ip ?? 'unknown'), 3_600_000);
  return (req, res, next) => (req.method === 'POST' ? limit(req, res, next) : next());
}

/** Per user of a valid token (an invalid one is left to the services to refuse); 0 turns it off. */
export function limitPerUser(perMinute: number, publicKey: string): RequestHandler {
  if (perMinute === 0) return (_req, _res, next) => next();
  // skip() and keyGenerator() both ask for the key: verify each token once per request.
  const keys = new WeakMap<object, string | null>();
  return limiter(perMinute, (req) => {
    if (!keys.has(req)) keys.set(req, userKey(req.header('authorization'), publicKey));
    return keys.get(req)!;
  });
}

function userKey(authorization: string | undefined, publicKey: string): string | null {
  const token = bearerToken(authorization);
  if (!token) return null;
  try {
    return `user:${verifyAccessToken(token, publicKey).id}`;
  } catch {
    return null;
  }
}
