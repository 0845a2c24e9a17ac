import { z } from 'zod';
import { Role } from './events';

// Apart from the gateway's auth bodies (auth.ts): every service verifies access tokens, and only
// the gateway signs them.

/** Claims of an access token (JWT RS256, signed by the gateway, verified by every service). */
export const AccessClaims = z.object({
  sub: z.string().min(1),
  ref: z.string().min(1),
  role: Role,
  email: z.string(),
  name: z.string(),
});
export type AccessClaims = z.infer<typeof AccessClaims>;

export const JWT_ISSUER = 'marketplace-gateway';
export const JWT_AUDIENCE = 'marketplace';
