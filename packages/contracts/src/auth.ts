import { z } from 'zod';
import { EMAIL_PIPE, NON_BLANK } from './schema-meta';
import { Role } from './events';
import { referenceOf } from './references';
import { RULE } from './rules';

export { Role };

const Email = z.string().trim().toLowerCase().max(254).pipe(z.email('Expected an email address')).meta(EMAIL_PIPE);
// bcrypt reads at most 72 bytes; longer passwords would be silently truncated.
const Password = z
  .string()
  .min(8, 'A password has at least 8 characters')
  .max(72, 'A password has at most 72 characters')
  .refine((value) => Buffer.byteLength(value, 'utf8') <= 72, { message: 'A password has at most 72 bytes', params: RULE });

export const RegisterBody = z
  .object({
    email: Email,
    password: Password,
    fullName: z.string().trim().min(1).max(120).meta(NON_BLANK),
    role: z.enum(['buyer', 'seller']).meta({ id: 'RegisterRole' }),
  })
  .strict()
  .meta({ id: 'RegisterBody' });
export type RegisterBody = z.infer<typeof RegisterBody>;

export const LoginBody = z
  .object({
    email: z.string().trim().toLowerCase().min(1).max(254).meta(NON_BLANK),
    password: z.string().min(1).max(1024),
  })
  .strict()
  .meta({ id: 'LoginBody' });
export type LoginBody = z.infer<typeof LoginBody>;

export const RefreshBody = z
  .object({ refreshToken: z.string().trim().min(1).max(512).meta(NON_BLANK) })
  .strict()
  .meta({ id: 'RefreshBody' });
export type RefreshBody = z.infer<typeof RefreshBody>;

export const LogoutBody = RefreshBody.meta({ id: 'LogoutBody' });
export type LogoutBody = RefreshBody;

export const AuthUser = z.object({
  id: z.string().uuid(),
  referenceId: referenceOf('USR'),
  email: z.string(),
  fullName: z.string(),
  role: Role,
});
export type AuthUser = z.infer<typeof AuthUser>;

export const AuthSession = z.object({
  user: AuthUser,
  accessToken: z.string(),
  refreshToken: z.string(),
  tokenType: z.literal('Bearer'),
  expiresIn: z.number().int().positive(),
});
export type AuthSession = z.infer<typeof AuthSession>;

export { AccessClaims, JWT_AUDIENCE, JWT_ISSUER } from './access-claims';
