import { Forbidden, NotFound } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import type { ConsultationDoc } from './records';

/**
 * How this instance writes `<PREFIX>-<KIND>-…` references (config `REF_PREFIX`). Lookups do not
 * look at the prefix: a record keeps the reference it was made with, whatever the prefix is now.
 */
export interface References {
  prefix: string;
}

export function isAdmin(user: AuthenticatedUser | undefined): boolean {
  return user?.role === 'admin';
}

/** Sellers own their setup records; admins may act on anyone's. */
export function assertOwner(user: AuthenticatedUser, sellerId: string, what: string): void {
  if (user.id !== sellerId && !isAdmin(user)) throw new Forbidden(`This ${what} belongs to another seller`);
}

export function assertSeller(user: AuthenticatedUser): void {
  if (user.role !== 'seller' && user.role !== 'admin') throw new Forbidden('Only sellers do this');
}

/** Its seller and admins: who may see what is not public of a consultation (a pending revision). */
export const mayReview = (user: AuthenticatedUser | undefined, c: ConsultationDoc) =>
  user !== undefined && (user.id === c.sellerId || isAdmin(user));

export const isListed = (c: Pick<ConsultationDoc, 'currentStatus' | 'visibility'>) =>
  c.currentStatus === 'Approved' && c.visibility === 'Published';

/**
 * A consultation the caller may know of: listed ones to anyone, others to their seller or an
 * admin. To anyone else an unlisted one does not exist (404), nor does its price.
 */
export function visibleTo(user: AuthenticatedUser | undefined, consultation: ConsultationDoc | null): ConsultationDoc {
  if (!consultation || (!isListed(consultation) && user?.id !== consultation.sellerId && !isAdmin(user)))
    throw new NotFound('Consultation');
  return consultation;
}

/**
 * The user an answer is for (`userId` of validate-coupon and visibility status): the caller when
 * none is named. A user may name only themselves (by id or USR reference); an admin may name
 * anyone. Naming someone else is 403 whether or not they exist, so the answer says nothing about
 * them. `self` answers know the user's role from their token; others only by what the admin says.
 */
export interface Subject {
  /** The named id or reference (the caller's id when none is named). */
  key: string;
  self: boolean;
  /** Known only when the answer is for the caller (from their token). */
  role?: AuthenticatedUser['role'];
}

export function subjectOf(user: AuthenticatedUser, userId: string | undefined): Subject {
  if (userId === undefined || userId === user.id || userId === user.ref) return { key: user.id, self: true, role: user.role };
  if (isAdmin(user)) return { key: userId, self: false };
  throw new Forbidden('userId names another user: you may ask only for yourself');
}
