import { z } from 'zod';
import { EMAIL_BY_PATTERN } from '../schema-meta';
import { PrefixedRef, Text, UserId, UserRole } from './common';

export const AuthUserResponse = z
  .strictObject({
    id: UserId,
    referenceId: PrefixedRef('USR'),
    email: z.email().meta({ examples: ['sara@example.com'], ...EMAIL_BY_PATTERN }),
    fullName: Text('Sara Tesfaye'),
    role: UserRole,
  })
  .meta({ id: 'AuthUser' });

/** Register, login and refresh: the user and a fresh token pair. */
export const AuthSessionResponse = z
  .strictObject({
    user: AuthUserResponse,
    accessToken: Text('eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiIzZjFjIn0.c2lnbmF0dXJl'),
    refreshToken: Text('rt_8Jc3Vb0sQ1mZ4yX7wK2pL9nT6hF5gD3a'),
    tokenType: z.literal('Bearer'),
    expiresIn: z
      .number()
      .int()
      .positive()
      .meta({ examples: [900] }),
  })
  .meta({ id: 'AuthSession' });

/** The standard JWKS document (not enveloped). */
export const JwksDocument = z
  .strictObject({
    keys: z
      .array(
        z.strictObject({
          kty: z.literal('RSA'),
          n: Text(
            '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw',
          ),
          e: Text('AQAB'),
          kid: Text('k1'),
          alg: z.literal('RS256'),
          use: z.literal('sig'),
        }),
      )
      .min(1),
  })
  .meta({ id: 'JwksDocument' });
