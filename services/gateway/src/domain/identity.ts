import type { AccessClaims, AuthUser, Role } from '@mkt/contracts/gateway';
import type { UserDoc } from './records';

/**
 * Identity's rules, pure: what a user answers as, what an access token claims, the record of a
 * new user and its event, a refresh token's lifetime, and what a refresh token that cannot be
 * used means. Ids, hashes, clocks and the database are the application's (application/identity.use-cases.ts).
 */

/** A user as the rules see it: the stored record less its password hash, clocks and events. */
export type UserState = Pick<UserDoc, '_id' | 'referenceId' | 'email' | 'fullName' | 'role'>;

const DAY_MS = 86_400_000;

export function toAuthUser(user: UserState): AuthUser {
  return { id: user._id, referenceId: user.referenceId, email: user.email, fullName: user.fullName, role: user.role };
}

/** The claims of a user's access token. */
export function accessClaimsOf(user: UserState): AccessClaims {
  return { sub: user._id, ref: user.referenceId, role: user.role, email: user.email, name: user.fullName };
}

/** A new user (the email as the contracts' schema normalised it) and the event that tells the other services. */
export function newUser(
  fields: { email: string; fullName: string; role: Role },
  made: { id: string; referenceId: string; passwordHash: string },
) {
  const user = {
    _id: made.id,
    referenceId: made.referenceId,
    email: fields.email,
    passwordHash: made.passwordHash,
    fullName: fields.fullName,
    role: fields.role,
  };
  const emit = {
    type: 'identity.user.registered' as const,
    data: { userId: made.id, referenceId: made.referenceId, role: fields.role, fullName: fields.fullName, email: fields.email },
  };
  return { user, emit };
}

/** The configured admin's email as stored (trimmed, lower-cased). */
export function adminEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** When a refresh token issued `now` expires. */
export function refreshExpiry(now: Date, ttlDays: number): Date {
  return new Date(now.getTime() + ttlDays * DAY_MS);
}

/** What a refresh token must still be when it is used: never used, not revoked, expiring after `now`. */
export interface UsableRefreshToken {
  usedAt: null;
  revokedAt: null;
  expiresAfter: Date;
}

/** A refresh token can be used once, before it expires, unless its family was revoked. */
export function usableRefreshToken(now: Date): UsableRefreshToken {
  return { usedAt: null, revokedAt: null, expiresAfter: now };
}

/**
 * A refresh token that could not be used: one that was used already and is shown again was
 * stolen (or copied), so its whole family is revoked; anything else (unknown, expired, revoked)
 * is only refused.
 */
export function onUnusableRefreshToken(
  known: { usedAt: Date | null; familyId: string; userId: string } | null,
): { revokeFamily: string; userId: string } | 'refuse' {
  return known?.usedAt ? { revokeFamily: known.familyId, userId: known.userId } : 'refuse';
}
