import { createHash, createPublicKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { RequestHandler } from 'express';
import jwt from 'jsonwebtoken';
import { AccessClaims, JWT_AUDIENCE, JWT_ISSUER, type Role } from '@mkt/contracts/core';
import { Forbidden, Unauthenticated } from '../errors';
import { staticAccessKeys, type AccessKeys } from './access-keys';

/** Who is calling, from a verified access token. */
export interface AuthenticatedUser {
  id: string;
  ref: string;
  role: Role;
  email: string;
  name: string;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      user?: AuthenticatedUser;
    }
  }
}

// The PEM parsed once per key, not on every request (it showed in the services' profiles).
const parsedKeys = new Map<string, KeyObject>();
function publicKeyOf(pem: string): KeyObject {
  let key = parsedKeys.get(pem);
  if (!key) parsedKeys.set(pem, (key = createPublicKey(pem)));
  return key;
}

/**
 * Tokens already verified, until they expire (the RS256 check and the claims' parse
 * were on every request, for the same token a client sends again and again). A token is the
 * signed text itself, so a hit is the same token under the same key — the key its `kid` names
 * now is asked on every hit, so a token of a key taken out of the set is refused like any
 * other; expiry is checked on every hit. Only a token whose signature is in its canonical
 * base64url form is kept (the spare bits of the last character give each token 16 spellings
 * that all verify: one client could otherwise fill the cache with one token). Bounded: when
 * full, the oldest entry goes.
 */
const verified = new Map<string, { user: AuthenticatedUser; key: string; expiresAtMs: number }>();
const VERIFIED_MAX = 10_000;

/** A PEM (one key, whatever the token's `kid`) or a key set by `kid`. */
export type TokenKeys = string | AccessKeys;
const asAccessKeys = (keys: TokenKeys): AccessKeys => (typeof keys === 'string' ? staticAccessKeys(keys) : keys);

/** The `kid` of a token's header; undefined when there is none (or no readable header). */
export function keyIdOf(token: string): string | undefined {
  try {
    const header = JSON.parse(Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString('utf8')) as { kid?: unknown };
    return typeof header.kid === 'string' ? header.kid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Verifies an access token: with the key its `kid` names in `keys` (a PEM: that one key), RS256
 * only (an `alg: none` token or an HS256 token signed with the public key is refused), our
 * issuer and audience, not expired. Throws (rejects with) Unauthenticated.
 */
export async function verifyAccessToken(token: string, keys: TokenKeys): Promise<AuthenticatedUser> {
  const publicKey = await asAccessKeys(keys).keyFor(keyIdOf(token));
  const hit = verified.get(token);
  if (hit && hit.key === publicKey && Date.now() < hit.expiresAtMs) return { ...hit.user };
  return verifyAccessTokenNow(token, publicKey);
}

function verifyAccessTokenNow(token: string, publicKey: string): AuthenticatedUser {
  let payload: unknown;
  try {
    payload = jwt.verify(token, publicKeyOf(publicKey), { algorithms: ['RS256'], issuer: JWT_ISSUER, audience: JWT_AUDIENCE });
  } catch (err) {
    const expired = err instanceof jwt.TokenExpiredError;
    throw new Unauthenticated(expired ? 'The access token has expired' : 'The access token is not valid');
  }
  const claims = AccessClaims.safeParse(payload);
  if (!claims.success) throw new Unauthenticated('The access token is not valid');
  const { sub, ref, role, email, name } = claims.data;
  const user = { id: sub, ref, role, email, name };
  const exp = (payload as { exp?: unknown }).exp;
  if (typeof exp === 'number') {
    if (hasCanonicalSignature(token)) {
      if (verified.size >= VERIFIED_MAX) verified.delete(verified.keys().next().value!);
      verified.set(token, { user: { ...user }, key: publicKey, expiresAtMs: exp * 1000 });
    }
  }
  return user;
}

function hasCanonicalSignature(token: string): boolean {
  const signature = token.slice(token.lastIndexOf('.') + 1);
  return Buffer.from(signature, 'base64url').toString('base64url') === signature;
}

export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return match ? match[1]! : null;
}

/** Requires a valid bearer token; never trusts an identity header. */
export function authenticate(keys: TokenKeys): RequestHandler {
  const set = asAccessKeys(keys);
  return (req, _res, next) => {
    const token = bearerToken(req.header('authorization'));
    if (!token) return next(new Unauthenticated());
    verifyAccessToken(token, set).then((user) => {
      req.user = user;
      next();
    }, next);
  };
}

/** Reads a token when one is sent (public endpoints that answer more to a known caller). */
export function authenticateOptional(keys: TokenKeys): RequestHandler {
  const set = asAccessKeys(keys);
  return (req, _res, next) => {
    const token = bearerToken(req.header('authorization'));
    if (!token) return next();
    verifyAccessToken(token, set).then((user) => {
      req.user = user;
      next();
    }, next);
  };
}

export function requireRole(...roles: Role[]): RequestHandler {
  return (req, _res, next) => {
    if (!req.user) return next(new Unauthenticated());
    if (!roles.includes(req.user.role)) return next(new Forbidden(`This needs the role ${roles.join(' or ')}`));
    next();
  };
}

/** The authenticated user of a request that passed `authenticate`. */
export function currentUser(req: Express.Request): AuthenticatedUser {
  if (!req.user) throw new Unauthenticated();
  return req.user;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Service-to-service calls (`/internal/...`, access `service`): the shared credential in
 * `x-internal-token`, compared in constant time (digests of equal length). Never a user's
 * token; an empty configured credential refuses every call.
 */
export function requireServiceToken(token: string): RequestHandler {
  const expected = token ? digest(token) : null;
  return (req, _res, next) => {
    const given = req.header('x-internal-token');
    if (!expected || !given || !timingSafeEqual(digest(given), expected))
      return next(new Unauthenticated('A service credential is required'));
    next();
  };
}
