import { createHash, createPublicKey, randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { JWT_AUDIENCE, JWT_ISSUER, type AccessClaims } from '@mkt/contracts';

export interface SigningKeys {
  privateKey: string;
  publicKey: string;
  keyId: string;
  accessTtlSeconds: number;
}

export function signAccessToken(claims: AccessClaims, keys: SigningKeys): string {
  const { sub, ...rest } = claims;
  return jwt.sign(rest, keys.privateKey, {
    algorithm: 'RS256',
    subject: sub,
    issuer: JWT_ISSUER,
    audience: JWT_AUDIENCE,
    expiresIn: keys.accessTtlSeconds,
    keyid: keys.keyId,
  });
}

/** 256 random bits, URL-safe. */
export function newRefreshToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The public key as a JSON Web Key Set, for anyone verifying our tokens. */
export function jwks(keys: SigningKeys): { keys: object[] } {
  const jwk = createPublicKey(keys.publicKey).export({ format: 'jwk' });
  return { keys: [{ ...jwk, kid: keys.keyId, alg: 'RS256', use: 'sig' }] };
}
