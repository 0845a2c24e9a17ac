import { z } from 'zod';
import { AuditFilterQuery, AuditLogQuery, AuditLogResponse } from '../admin';
import { LoginBody, LogoutBody, RefreshBody, RegisterBody } from '../auth';
import { AuthSessionResponse, AuthUserResponse, JwksDocument } from '../responses/auth';
import { e } from './table';

// The gateway's own operations: sign-up, sessions and its key set, and the audit log (admins).

/** The gateway's sign-up and sessions (`/v1/auth`). */
export const AUTH_TABLE = [
  e('post', '/v1/auth/register', 'gateway', 'public', 'register', 'Register a buyer or seller', {
    errors: { 409: true, 422: ['invalid'] },
    body: RegisterBody,
    example: { email: 'sara@example.com', password: 'a long password', fullName: 'Sara Tesfaye', role: 'buyer' },
    data: AuthSessionResponse,
  }),
  e('post', '/v1/auth/login', 'gateway', 'public', 'login', 'Log in', {
    errors: { 401: true },
    body: LoginBody,
    example: { email: 'sara@example.com', password: 'a long password' },
    data: AuthSessionResponse,
  }),
  e('post', '/v1/auth/refresh', 'gateway', 'public', 'refreshSession', 'Rotate a refresh token', {
    errors: { 401: true },
    body: RefreshBody,
    example: { refreshToken: 'rt_8Jc3Vb0sQ1mZ4yX7wK2pL9nT6hF5gD3a' },
    data: AuthSessionResponse,
  }),
  e('post', '/v1/auth/logout', 'gateway', 'public', 'logout', 'Revoke a refresh token family', {
    body: LogoutBody,
    example: { refreshToken: 'rt_8Jc3Vb0sQ1mZ4yX7wK2pL9nT6hF5gD3a' },
    // The wire has `data: null`. Documented as a nullable object with no fields: a bare
    // `type: null` (or `const`/`enum` null) is a type no generator can name (typescript-fetch
    // emits a missing `./Null` model, or fails); this reads as `object | null` and is always null.
    data: z.null().meta({
      description: 'Always null: logging out answers no data.',
      override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
        Object.assign(jsonSchema, { type: ['object', 'null'], maxProperties: 0 });
      },
    }),
  }),
  e('get', '/v1/auth/me', 'gateway', 'bearer', 'getCurrentUser', 'The caller', { errors: { 404: true }, data: AuthUserResponse }),
  e('get', '/v1/auth/.well-known/jwks.json', 'gateway', 'public', 'getJwks', 'The public key (JWKS)', {
    errors: { 503: false },
    produces: 'jwks',
    data: JwksDocument,
  }),
] as const;

/** The audit log of admin actions (admins only; the gateway keeps it). */
export const AUDIT_TABLE = [
  e('get', '/v1/admin/audit-log', 'gateway', 'admin', 'listAuditLog', 'The audit log of admin actions (newest first)', {
    query: AuditLogQuery,
    data: AuditLogResponse,
  }),
  e('get', '/v1/admin/audit-log/export', 'gateway', 'admin', 'getAuditLogCsv', 'The audit log as CSV (the same filters)', {
    query: AuditFilterQuery,
    produces: 'csv',
  }),
] as const;
