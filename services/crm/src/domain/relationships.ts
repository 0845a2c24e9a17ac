import {
  adminActionData,
  makeEvent,
  type AdminRequestContext,
  type CreateCustomerBody,
  type IntegrationEvent,
  type Role,
  type UpdateCustomerBody,
} from '@mkt/contracts/crm';
import type { KnownUser, Relationship, Pair } from './records';
import { Forbidden, InvalidField, NotFound } from '@mkt/kit/domain';
import { FollowIsTheBuyers, NotACustomer, UnknownSeller } from './errors';

/** Who asks (the verified token's user, as http/ hands it over): all a rule needs to know of them. */
export interface Actor {
  id: string;
  ref: string;
  role: Role;
}

/** What a create writes; the rest are the schema's defaults (totals zero until recomputed). */
export type NewRelationship = Pick<Relationship, '_id' | 'referenceId' | 'sellerId' | 'buyerId'> &
  Partial<Omit<Relationship, 'createdAt' | 'updatedAt'>>;

const plain = (value: unknown): unknown => (value instanceof Date ? value.toISOString() : (value ?? null));
const sameValue = (a: unknown, b: unknown) => JSON.stringify(plain(a)) === JSON.stringify(plain(b));

function auditEvent(
  user: Actor,
  action: 'customer.create' | 'customer.edit' | 'customer.delete',
  id: string,
  change: { before: Record<string, unknown> | null; after: Record<string, unknown> | null },
  context: AdminRequestContext,
  now: Date,
): IntegrationEvent {
  const data = adminActionData(user, action, { type: 'customer', id }, context, now, change);
  return makeEvent('crm.admin_action.recorded', data, { source: 'crm', correlationId: context.requestId });
}

/**
 * An admin's new relationship for a seller carries its audit entry (`customer.create`: after, the
 * pair and the fields it sets) in its own insert's outbox: a refused or duplicate create writes
 * neither. A seller's own create is returned as it was.
 */
export function auditedCreate(user: Actor, record: NewRelationship, context: AdminRequestContext, now: Date): NewRelationship {
  if (!isAdmin(user)) return record;
  const { _id, referenceId: _referenceId, pendingEvents: _pending, ...fields } = record;
  const after = Object.fromEntries(Object.entries(fields).map(([field, value]) => [field, plain(value)]));
  return { ...record, pendingEvents: [auditEvent(user, 'customer.create', _id, { before: null, after }, context, now)] };
}

/**
 * A relationship's update as one write: the values it expects the relationship still to hold
 * (beyond the id; null: none), the fields it sets, and the audit entry it puts in the outbox.
 */
export interface RelationshipWrite {
  expect: RelationshipExpectation;
  set: RelationshipChange;
  event?: IntegrationEvent;
}

/** The values of the fields an update replaces, as read (null: none then). */
export type RelationshipExpectation = { [K in keyof RelationshipChange]?: Relationship[K] | null };

/**
 * How an update is written. An admin's carries its audit entry (`customer.edit`: the fields it
 * changes, before and after) in the same write, guarded by the values it replaces (a change of
 * them landing in between makes it miss: 409, nothing written or recorded). Its seller's or
 * buyer's own update is the plain one.
 */
export function relationshipWrite(
  user: Actor,
  current: Relationship,
  set: RelationshipChange,
  context: AdminRequestContext,
  now: Date,
): RelationshipWrite {
  if (!isAdmin(user)) return { expect: {}, set };
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  const expect: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(set)) {
    const old = current[field as keyof RelationshipChange];
    expect[field] = old ?? null;
    if (sameValue(old, value)) continue;
    before[field] = plain(old);
    after[field] = plain(value);
  }
  const event = auditEvent(user, 'customer.edit', current._id, { before, after }, context, now);
  return { expect, set, event };
}

/** The fields an update sets. */
export type RelationshipChange = Partial<
  Pick<
    Relationship,
    | 'status'
    | 'customerType'
    | 'notificationPreference'
    | 'notes'
    | 'tags'
    | 'isFavorite'
    | 'isFollower'
    | 'followStatus'
    | 'followedAt'
    | 'markedFavoriteAt'
  >
>;

export const isAdmin = (user: Actor) => user.role === 'admin';

const notFound = () => new NotFound('Customer relationship');

/** The relationship a key found, or 404. */
export function found(doc: Relationship | null): Relationship {
  if (!doc) throw notFound();
  return doc;
}

function assertSellerSide(user: Actor, sellerId: string): void {
  if (user.id !== sellerId && !isAdmin(user)) throw new Forbidden('Only the seller of this relationship may do this');
}

/**
 * A seller records relationships for itself only: `sellerId` (id or reference) must be the
 * caller; an admin may name any known seller (`named`: the user `sellerId` found, read only for
 * an admin). Stored by user id.
 */
export function resolveSeller(user: Actor, body: Pick<CreateCustomerBody, 'sellerId'>, named: KnownUser | null): string {
  if (isAdmin(user)) {
    if (!named || named.role !== 'seller') throw new UnknownSeller();
    return named._id;
  }
  if (user.role !== 'seller') throw new Forbidden('Only sellers record customer relationships');
  if (body.sellerId !== user.id && body.sellerId !== user.ref) throw new Forbidden('A seller records relationships for itself only');
  return user.id;
}

/**
 * The buyer of a new relationship: a user with the buyer role (`identity.user.registered`,
 * `named`) who has a confirmed booking with this seller (`consultation.booking.confirmed`;
 * cancelled since or not: `booked`). Both are read for every key, so the refusals do not differ
 * in the work done.
 */
export function resolveBuyer(named: KnownUser | null, booked: boolean): string {
  if (!named || named.role !== 'buyer' || !booked) throw new NotACustomer();
  return named._id;
}

/**
 * Whether a body asks for following, from `isFollower` or `followStatus` (kept as one fact);
 * undefined when it names neither. The two saying opposite things is 422.
 */
export function requestedFollow(body: { isFollower?: boolean; followStatus?: string }): boolean | undefined {
  const byStatus = body.followStatus === undefined ? undefined : body.followStatus === 'Following';
  if (body.isFollower !== undefined && byStatus !== undefined && body.isFollower !== byStatus)
    throw new InvalidField('followStatus says the opposite of isFollower', 'followStatus');
  return body.isFollower ?? byStatus;
}

/**
 * Following is the buyer's choice: a seller that could set it would list any buyer among its
 * "followers". A seller's create or update that would change it (a new relationship starts not
 * following) is 403; sending the value it has, as a client does that sends back what it read,
 * changes nothing. An admin may set it.
 */
export function assertFollowUnchangedBy(user: Actor, follow: boolean | undefined, current: boolean): void {
  if (isAdmin(user) || follow === undefined || follow === current) return;
  throw new FollowIsTheBuyers();
}

/** Whether a create may set following (checked before the buyer is looked up); the value it sets. */
export function createFollow(user: Actor, body: Pick<CreateCustomerBody, 'isFollower' | 'followStatus'>): boolean {
  // The schema defaults `isFollower` to false: only a true one is a request, which `followStatus` may contradict.
  const follow = requestedFollow({ isFollower: body.isFollower || undefined, followStatus: body.followStatus }) ?? false;
  assertFollowUnchangedBy(user, follow, false);
  return follow;
}

/** A new relationship of `pair` with the body's fields; following and favourite stamped `now`. */
export function decideCreate(
  body: CreateCustomerBody,
  pair: Pair,
  follow: boolean,
  ids: { id: string; referenceId: string },
  now: Date,
): NewRelationship {
  return {
    _id: ids.id,
    referenceId: ids.referenceId,
    ...body,
    ...pair,
    isFollower: follow,
    followStatus: follow ? 'Following' : 'NotFollowing',
    followedAt: follow ? now : null,
    markedFavoriteAt: body.isFavorite ? now : null,
  };
}

/** Read one: its seller, its buyer, an admin. */
export function assertReader(user: Actor, doc: Pair): void {
  if (user.id !== doc.sellerId && user.id !== doc.buyerId && !isAdmin(user)) throw new Forbidden('This relationship is not yours');
}

/** The seller's own notes and tags about a buyer are the seller's (and an admin's); the buyer reads them blank. */
export function seesSellerNotes(viewer: Actor | undefined, doc: Pair): boolean {
  return !viewer || viewer.id === doc.sellerId || isAdmin(viewer);
}

/**
 * Its seller (or an admin) changes the relationship, except following, which is its buyer's
 * (`assertFollowUnchangedBy`); its buyer may change only that. Flags turning on stamp
 * `followedAt` / `markedFavoriteAt` with `now`; turning off clears them.
 */
export function decideUpdate(user: Actor, current: Relationship, body: UpdateCustomerBody, now: Date): RelationshipChange {
  const { isFollower: _isFollower, followStatus: _followStatus, ...sellerFields } = body;
  let follow = requestedFollow(body);
  if (user.id === current.buyerId) {
    if (Object.keys(sellerFields).length > 0) throw new Forbidden('A buyer changes only whether they follow the seller');
  } else {
    assertSellerSide(user, current.sellerId);
    assertFollowUnchangedBy(user, follow, current.isFollower);
    // The value it already had, sent back by a seller, is not written: a buyer's unfollow
    // landing meanwhile must stand.
    if (!isAdmin(user)) follow = undefined;
  }
  const set: RelationshipChange = { ...sellerFields };
  if (follow !== undefined) {
    set.isFollower = follow;
    set.followStatus = follow ? 'Following' : 'NotFollowing';
    if (follow !== current.isFollower) set.followedAt = follow ? now : null;
  }
  if (body.isFavorite !== undefined && body.isFavorite !== current.isFavorite) set.markedFavoriteAt = body.isFavorite ? now : null;
  return set;
}

/**
 * Its seller removes a relationship, and so may the buyer it names: nobody keeps a follow or a
 * customer record in someone's name that they cannot take away. A later booking event of the
 * pair makes a fresh one (totals from the booking facts).
 */
export function assertDeleter(user: Actor, current: Pair): void {
  if (user.id !== current.buyerId) assertSellerSide(user, current.sellerId);
}

/** A delete as the record deletes take it: the state it must still be in, and the event it records. */
export interface RelationshipDeletion {
  guard: Record<string, unknown>;
  entry: IntegrationEvent | null;
}

/**
 * How a delete is taken. Its seller's or buyer's own is the plain one (no guard, nothing
 * recorded). An admin's records its audit entry (`customer.delete`: before, what the
 * relationship was) and is guarded by the `updatedAt` read, so a change landing in between (an
 * edit, a booking's totals) makes it miss (409, nothing deleted, nothing recorded).
 */
export function relationshipDeletion(user: Actor, current: Relationship, context: AdminRequestContext, now: Date): RelationshipDeletion {
  if (!isAdmin(user) || user.id === current.sellerId || user.id === current.buyerId) return { guard: {}, entry: null };
  const { _id, pendingEvents: _pending, createdAt: _createdAt, updatedAt: _updatedAt, ...fields } = current;
  const before = Object.fromEntries(Object.entries(fields).map(([field, value]) => [field, plain(value)]));
  const entry = auditEvent(user, 'customer.delete', _id, { before, after: null }, context, now);
  return { guard: { updatedAt: current.updatedAt }, entry };
}

/**
 * Whose relationships a listing path names (id or reference): the caller's own (their id), or
 * for an admin anyone's — `null` then: the key is to be looked up. Anyone else's is 403.
 */
export function listingOwner(user: Actor, key: string): string | null {
  if (key === user.id || key === user.ref) return user.id;
  if (!isAdmin(user)) throw new Forbidden('You may read only your own relationships');
  return null;
}

/** GET /customers: an admin reads every relationship, a buyer theirs, anyone else their customers. */
export function ownScope(user: Actor): Partial<Pair> {
  return isAdmin(user) ? {} : user.role === 'buyer' ? { buyerId: user.id } : { sellerId: user.id };
}

/** The listings of one seller's (the first four) or one buyer's relationships. */
export type Listing = 'customers' | 'followers' | 'favorites' | 'high-value' | 'relationships' | 'following' | 'buyer-customers';
