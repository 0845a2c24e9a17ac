import type { Model } from 'mongoose';
import { byIdOrReference, Forbidden, NotFound, type AuthenticatedUser } from '@mkt/kit';

/** Every record is found by its id or its referenceId. */
export async function findByKey<T>(model: Model<T>, key: string): Promise<T | null> {
  return model.findOne(byIdOrReference(key)).lean<T>() as Promise<T | null>;
}

export async function mustFind<T>(model: Model<T>, key: string, what: string): Promise<T> {
  const found = await findByKey(model, key);
  if (!found) throw new NotFound(what);
  return found;
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
