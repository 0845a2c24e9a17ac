import { createHash, randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { JWT_AUDIENCE, JWT_ISSUER, type AccessClaims } from '@mkt/contracts/gateway';
import type { SigningKeySet } from './key-set';

export interface SigningKeys {
  /** The key set: the current key signs, every key of it is published. */
  set: SigningKeySet;
  accessTtlSeconds: number;
}

/** An access token signed with the set's current key, its id in the header's `kid`. */
export function signAccessToken(claims: AccessClaims, keys: SigningKeys): string {
  const { sub, ...rest } = claims;
  const key = keys.set.current();
  return jwt.sign(rest, key.privateKey, {
    algorithm: 'RS256',
    subject: sub,
    issuer: JWT_ISSUER,
    audience: JWT_AUDIENCE,
    expiresIn: keys.accessTtlSeconds,
    keyid: key.kid,
  });
}

/** 256 random bits, URL-safe. */
export function newRefreshToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The public keys of the set (current, next, previous) as a JSON Web Key Set, for anyone verifying our tokens. */
export function jwks(keys: SigningKeys): { keys: object[] } {
  return keys.set.jwks();
}
