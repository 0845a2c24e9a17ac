import {
  majorToMinor,
  minorToMajor,
  newInternalId,
  newUnderscoreReference,
  pageOffset,
  pagination,
  type CreateCustomerBody,
  type PageQuery,
  type UpdateCustomerBody,
} from '@mkt/contracts';
import { byIdOrReference, Conflict, Forbidden, isDuplicateKey, NotFound, type AuthenticatedUser } from '@mkt/kit';
import { KnownUser, Relationship, type RelationshipDoc } from '../db/crm.models';
import { analyticsOf } from './totals';

const iso = (date: Date | null) => (date ? date.toISOString() : null);
const isAdmin = (user: AuthenticatedUser) => user.role === 'admin';

/** The whole relationship with both names, as the detail and the listings read it. */
export interface RelationshipRow {
  doc: RelationshipDoc;
  buyerName: string | null;
  sellerName: string | null;
}

export function relationshipView({ doc, buyerName, sellerName }: RelationshipRow) {
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
    notes: doc.notes,
    tags: doc.tags,
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

export async function createRelationship(user: AuthenticatedUser, body: CreateCustomerBody): Promise<RelationshipDoc> {
  assertSellerSide(user, body.sellerId);
  if (body.sellerId === body.buyerId) throw new Conflict('A seller is not their own customer');
  const now = new Date();
  try {
    const doc = await Relationship.create({
      _id: newInternalId('cus'),
      referenceId: newUnderscoreReference('CUS'),
      ...body,
      followStatus: body.followStatus ?? (body.isFollower ? 'Following' : 'NotFollowing'),
      followedAt: body.isFollower ? now : null,
      markedFavoriteAt: body.isFavorite ? now : null,
    });
    return doc.toObject();
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

/** Flags turning on stamp `followedAt` / `markedFavoriteAt`; turning off clears them. */
export async function updateRelationship(user: AuthenticatedUser, id: string, body: UpdateCustomerBody): Promise<RelationshipDoc> {
  const current = await findRelationship(id);
  assertSellerSide(user, current.sellerId);
  const set: Record<string, unknown> = { ...body };
  const now = new Date();
  if (body.isFollower !== undefined && body.isFollower !== current.isFollower) {
    set.followedAt = body.isFollower ? now : null;
    set.followStatus ??= body.isFollower ? 'Following' : 'NotFollowing';
  }
  if (body.isFavorite !== undefined && body.isFavorite !== current.isFavorite) set.markedFavoriteAt = body.isFavorite ? now : null;
  return (await Relationship.findOneAndUpdate({ _id: current._id }, { $set: set }, { new: true }).lean<RelationshipDoc>())!;
}

export async function deleteRelationship(user: AuthenticatedUser, id: string): Promise<string> {
  const current = await findRelationship(id);
  assertSellerSide(user, current.sellerId);
  await Relationship.deleteOne({ _id: current._id });
  return current._id;
}

export type Listing = 'customers' | 'followers' | 'favorites' | 'high-value' | 'relationships' | 'following' | 'buyer-customers';

/** The filters of every listing; the side (seller or buyer) decides who may read it. */
function listingFilter(listing: Listing, ownerId: string, minLifetimeMinor: number): Record<string, unknown> {
  switch (listing) {
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
  listing: Listing,
  ownerId: string,
  query: PageQuery & { minLifetimeValue?: number },
) {
  if (user.id !== ownerId && !isAdmin(user)) throw new Forbidden('You may read only your own relationships');
  const filter = listingFilter(listing, ownerId, majorToMinor(query.minLifetimeValue ?? 0) ?? 0);
  const [docs, total] = await Promise.all([
    Relationship.find(filter).sort(SORT[listing]).skip(pageOffset(query)).limit(query.limit).lean<RelationshipDoc[]>(),
    Relationship.countDocuments(filter),
  ]);
  return { rows: (await withNames(docs)).map(relationshipView), total, pagination: pagination(query, total) };
}

/** GET /customers: a seller's customers, a buyer's relationships, or everything for an admin. */
export async function ownList(user: AuthenticatedUser, query: PageQuery & { status?: string; customerType?: string }) {
  const filter: Record<string, unknown> = isAdmin(user) ? {} : user.role === 'buyer' ? { buyerId: user.id } : { sellerId: user.id };
  if (query.status) filter.status = query.status;
  if (query.customerType) filter.customerType = query.customerType;
  const [docs, total] = await Promise.all([
    Relationship.find(filter).sort({ createdAt: -1 }).skip(pageOffset(query)).limit(query.limit).lean<RelationshipDoc[]>(),
    Relationship.countDocuments(filter),
  ]);
  return { rows: (await withNames(docs)).map(relationshipView), pagination: pagination(query, total) };
}

export async function sellerAnalytics(user: AuthenticatedUser, sellerId: string) {
  if (user.id !== sellerId && !isAdmin(user)) throw new Forbidden('You may read only your own analytics');
  const rows = await Relationship.find({ sellerId }, { status: 1, isFollower: 1, totalBookings: 1, totalSpentMinor: 1 }).lean<
    RelationshipDoc[]
  >();
  return analyticsOf(rows);
}
