import type { AuthenticatedUser } from '@mkt/kit/http';
import { Forbidden } from '@mkt/kit/domain';

/**
 * Whose wallet a path names by its owner's USR reference: the caller's own (`own`: opened on
 * first use), or anyone's for an admin (`other`: 404 when that user has none). Anybody else: 403.
 */
export function pathAccess(user: AuthenticatedUser, userRef: string): 'own' | 'other' {
  if (user.ref === userRef) return 'own';
  if (user.role !== 'admin') throw new Forbidden('This wallet belongs to someone else');
  return 'other';
}

/** A record of a wallet's owner: its owner or an admin may see it; others get 403. */
export function assertOwnerOrAdmin(user: AuthenticatedUser, ownerId: string): void {
  if (user.role !== 'admin' && user.id !== ownerId) throw new Forbidden('This record belongs to someone else');
}
