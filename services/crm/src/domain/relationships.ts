import {
  ErrorCode,
  minorToMajor,
  newInternalId,
  newUnderscoreReference,
  type CreateCustomerBody,
  type PageQuery,
  type UpdateCustomerBody,
} from '@mkt/contracts';
import {
  AppError,
  byIdOrReference,
  Conflict,
  Forbidden,
  foundOr404,
  InvalidField,
  isDuplicateKey,
  NotFound,
  RuleViolation,
  type AuthenticatedUser,
  findPage,
} from '@mkt/kit';
import { BookingFact, KnownUser, Relationship, type RelationshipDoc, type UserDoc } from '../db/crm.models';
import { recomputeTotals } from './projection';
import { analyticsOf } from './totals';

const iso = (date: Date | null) => (date ? date.toISOString() : null);
const isAdmin = (user: AuthenticatedUser) => user.role === 'admin';

/** The whole relationship with both names, as the detail and the listings read it. */
export interface RelationshipRow {
  doc: RelationshipDoc;
  buyerName: string | null;
  sellerName: string | null;
}

/**
 * The relationship as `viewer` may read it: the seller's own notes and tags about a buyer are
 * the seller's (and an admin's); the buyer reads them blank.
 */
export function relationshipView({ doc, buyerName, sellerName }: RelationshipRow, viewer?: AuthenticatedUser) {
  const sellerSide = !viewer || viewer.id === doc.sellerId || isAdmin(viewer);
  return {
    id: doc._id,
    referenceId: doc.referenceId,
    sellerId: doc.sellerId,
    buyerId: doc.buyerId,
    buyerName,
    sellerName,
    sellerCategory: doc.sellerCategory,
    status: doc.status,
    customerType: doc.customerType,
    isFollower: doc.isFollower,
    isFollowing: doc.isFollower,
    followStatus: doc.followStatus,
    notificationPreference: doc.notificationPreference,
    notes: sellerSide ? doc.notes : '',
    tags: sellerSide ? doc.tags : [],
    isFavorite: doc.isFavorite,
    followedAt: iso(doc.followedAt),
    markedFavoriteAt: iso(doc.markedFavoriteAt),
    totalBookings: doc.totalBookings,
    totalSpent: minorToMajor(doc.totalSpentMinor),
    lifetimeValue: minorToMajor(doc.lifetimeValueMinor),
    lastInteraction: iso(doc.lastInteraction),
    lastBooking: iso(doc.lastBooking),
    createdAt: iso(doc.createdAt),
    updatedAt: iso(doc.updatedAt),
  };
}
export type RelationshipView = ReturnType<typeof relationshipView>;

async function withNames(docs: RelationshipDoc[]): Promise<RelationshipRow[]> {
  const ids = [...new Set(docs.flatMap((doc) => [doc.sellerId, doc.buyerId]))];
  const users = await KnownUser.find({ _id: { $in: ids } }).lean();
  const names = new Map(users.map((user) => [user._id, user.fullName]));
  return docs.map((doc) => ({ doc, buyerName: names.get(doc.buyerId) ?? null, sellerName: names.get(doc.sellerId) ?? null }));
}

async function findRelationship(id: string): Promise<RelationshipDoc> {
  const doc = await Relationship.findOne(byIdOrReference(id)).lean<RelationshipDoc>();
  if (!doc) throw new NotFound('Customer relationship');
  return doc;
}

function assertSellerSide(user: AuthenticatedUser, sellerId: string): void {
  if (user.id !== sellerId && !isAdmin(user)) throw new Forbidden('Only the seller of this relationship may do this');
}

/** A user as `identity.user.registered` told us, found by id or USR reference. */
async function knownUser(key: string): Promise<UserDoc | null> {
  return KnownUser.findOne(byIdOrReference(key)).lean<UserDoc>();
}

function unknownSeller(): AppError {
  const message = 'No seller with this id or reference is known';
  return new AppError(404, ErrorCode.notFound, message, [{ path: 'sellerId', code: ErrorCode.notFound, message }]);
}

/**
 * The one answer for every buyer a seller may not name: unknown, not a buyer (the admin, a rival
 * seller, the seller itself) or a buyer who never booked with this seller. It says nothing about
 * which, so it cannot be used to find out who exists or what role they have.
 */
function notACustomer(): AppError {
  return new RuleViolation(ErrorCode.notEligible, 'Name a buyer who has booked with this seller', 'buyerId');
}

/**
 * The buyer of a new relationship: a user with the buyer role (`identity.user.registered`) who
 * has a confirmed booking with this seller (`consultation.booking.confirmed`; cancelled since
 * or not). Both lookups run for every key, so the refusals do not differ in the work done.
 */
async function customerOf(sellerId: string, buyerKey: string): Promise<string> {
  const user = await knownUser(buyerKey);
  const booked = await BookingFact.exists({ sellerId, buyerId: user?._id ?? buyerKey, confirmedAt: { $ne: null } });
  if (!user || user.role !== 'buyer' || !booked) throw notACustomer();
  return user._id;
}

/**
 * A seller records relationships for itself only: `sellerId` (id or reference) must be the
 * caller; an admin may name any known seller. Stored by user id.
 */
async function resolveSeller(user: AuthenticatedUser, body: CreateCustomerBody): Promise<string> {
  if (isAdmin(user)) {
    const seller = await knownUser(body.sellerId);
    if (!seller || seller.role !== 'seller') throw unknownSeller();
    return seller._id;
  }
  if (user.role !== 'seller') throw new Forbidden('Only sellers record customer relationships');
  if (body.sellerId !== user.id && body.sellerId !== user.ref) throw new Forbidden('A seller records relationships for itself only');
  return user.id;
}

/**
 * Whether a body asks for following, from `isFollower` or `followStatus` (kept as one fact);
 * undefined when it names neither. The two saying opposite things is 422.
 */
function requestedFollow(body: { isFollower?: boolean; followStatus?: string }): boolean | undefined {
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
function assertFollowUnchangedBy(user: AuthenticatedUser, follow: boolean | undefined, current: boolean): void {
  if (isAdmin(user) || follow === undefined || follow === current) return;
  const message = 'Only the buyer follows or unfollows a seller';
  throw new AppError(403, ErrorCode.forbidden, message, [{ path: 'isFollower', code: ErrorCode.forbidden, message }]);
}

export async function createRelationship(user: AuthenticatedUser, body: CreateCustomerBody): Promise<RelationshipDoc> {
  const sellerId = await resolveSeller(user, body);
  // The schema defaults `isFollower` to false: only a true one is a request, which `followStatus` may contradict.
  const follow = requestedFollow({ isFollower: body.isFollower || undefined, followStatus: body.followStatus }) ?? false;
  assertFollowUnchangedBy(user, follow, false);
  const pair = { sellerId, buyerId: await customerOf(sellerId, body.buyerId) };
  const now = new Date();
  try {
    const doc = await Relationship.create({
      _id: newInternalId('cus'),
      referenceId: newUnderscoreReference('CUS'),
      ...body,
      ...pair,
      isFollower: follow,
      followStatus: follow ? 'Following' : 'NotFollowing',
      followedAt: follow ? now : null,
      markedFavoriteAt: body.isFavorite ? now : null,
    });
    // The pair has booked (that is what lets it be named): its totals follow from those bookings
    // at once, as they would in the relationship the events open.
    await recomputeTotals(pair.sellerId, pair.buyerId);
    return foundOr404(await Relationship.findById(doc._id).lean<RelationshipDoc>(), 'Customer relationship');
  } catch (err) {
    if (isDuplicateKey(err)) throw new Conflict('This seller and buyer have a relationship already');
    throw err;
  }
}

export async function readRelationship(user: AuthenticatedUser, id: string): Promise<RelationshipRow> {
  const doc = await findRelationship(id);
  if (user.id !== doc.sellerId && user.id !== doc.buyerId && !isAdmin(user)) throw new Forbidden('This relationship is not yours');
  return (await withNames([doc]))[0]!;
}

/**
 * Its seller (or an admin) changes the relationship, except following, which is its buyer's
 * (`assertFollowUnchangedBy`); its buyer may change only that. Flags turning on stamp
 * `followedAt` / `markedFavoriteAt`; turning off clears them.
 */
export async function updateRelationship(user: AuthenticatedUser, id: string, body: UpdateCustomerBody): Promise<RelationshipDoc> {
  const current = await findRelationship(id);
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
  const set: Record<string, unknown> = { ...sellerFields };
  const now = new Date();
  if (follow !== undefined) {
    set.isFollower = follow;
    set.followStatus = follow ? 'Following' : 'NotFollowing';
    if (follow !== current.isFollower) set.followedAt = follow ? now : null;
  }
  if (body.isFavorite !== undefined && body.isFavorite !== current.isFavorite) set.markedFavoriteAt = body.isFavorite ? now : null;
  return foundOr404(
    await Relationship.findOneAndUpdate({ _id: current._id }, { $set: set }, { new: true }).lean<RelationshipDoc>(),
    'Customer',
  );
}

/**
 * Its seller removes a relationship, and so may the buyer it names: nobody keeps a follow or a
 * customer record in someone's name that they cannot take away. A later booking event of the
 * pair makes a fresh one (totals from the booking facts).
 */
export async function deleteRelationship(user: AuthenticatedUser, id: string): Promise<string> {
  const current = await findRelationship(id);
  if (user.id !== current.buyerId) assertSellerSide(user, current.sellerId);
  await Relationship.deleteOne({ _id: current._id });
  return current._id;
}

export type Listing = 'customers' | 'followers' | 'favorites' | 'high-value' | 'relationships' | 'following' | 'buyer-customers';

/** The filters of every listing; the side (seller or buyer) decides who may read it. */
function listingFilter(kind: Listing, ownerId: string, minLifetimeMinor: number): Record<string, unknown> {
  switch (kind) {
    case 'customers':
      return { sellerId: ownerId };
    case 'followers':
      return { sellerId: ownerId, isFollower: true };
    case 'favorites':
      return { sellerId: ownerId, isFavorite: true };
    case 'high-value':
      return { sellerId: ownerId, lifetimeValueMinor: { $gte: minLifetimeMinor } };
    case 'relationships':
      return { buyerId: ownerId };
    case 'following':
      return { buyerId: ownerId, isFollower: true };
    case 'buyer-customers':
      return { buyerId: ownerId, totalBookings: { $gt: 0 } };
  }
}

const SORT: Record<Listing, Record<string, 1 | -1>> = {
  customers: { lastInteraction: -1, createdAt: -1 },
  followers: { followedAt: -1 },
  favorites: { markedFavoriteAt: -1 },
  'high-value': { lifetimeValueMinor: -1 },
  relationships: { createdAt: -1 },
  following: { followedAt: -1 },
  'buyer-customers': { lastBooking: -1 },
};

export async function listing(
  user: AuthenticatedUser,
  kind: Listing,
  ownerKey: string,
  query: PageQuery & { minLifetimeValueMinor?: number },
) {
  const owner = await ownerOf(user, ownerKey);
  const filter = listingFilter(kind, owner, query.minLifetimeValueMinor ?? 0);
  const page = await findPage(Relationship, filter, query, SORT[kind]);
  return {
    rows: (await withNames(page.items)).map((row) => relationshipView(row, user)),
    total: page.pagination.total,
    pagination: page.pagination,
  };
}

/** GET /customers: a seller's customers, a buyer's relationships, or everything for an admin. */
export async function ownList(user: AuthenticatedUser, query: PageQuery & { status?: string; customerType?: string }) {
  const filter: Record<string, unknown> = isAdmin(user) ? {} : user.role === 'buyer' ? { buyerId: user.id } : { sellerId: user.id };
  if (query.status) filter.status = query.status;
  if (query.customerType) filter.customerType = query.customerType;
  const page = await findPage(Relationship, filter, query, { createdAt: -1 });
  return { rows: (await withNames(page.items)).map((row) => relationshipView(row, user)), pagination: page.pagination };
}

/** The user id a listing path names (id or reference): the caller's own, or anyone's for an admin. */
async function ownerOf(user: AuthenticatedUser, key: string): Promise<string> {
  if (key === user.id || key === user.ref) return user.id;
  if (!isAdmin(user)) throw new Forbidden('You may read only your own relationships');
  return (await knownUser(key))?._id ?? key;
}

export async function sellerAnalytics(user: AuthenticatedUser, sellerKey: string) {
  const sellerId = await ownerOf(user, sellerKey);
  const rows = await Relationship.find({ sellerId }, { status: 1, isFollower: 1, totalBookings: 1, totalSpentMinor: 1 }).lean<
    RelationshipDoc[]
  >();
  return analyticsOf(rows);
}
