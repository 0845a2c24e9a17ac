import type { FilterQuery, UpdateQuery } from 'mongoose';
import { newInternalId, newUnderscoreReference, type PageQuery } from '@mkt/contracts/crm';
import { byIdOrReference, findPage, type Page } from '@mkt/kit/db';
import { eventsWritten } from '@mkt/kit/bus';
import { isDuplicateKey } from '@mkt/kit/domain';
import type { Listing, NewRelationship, RelationshipWrite } from '../domain/relationships';
import type { Pair, Relationship } from '../domain/records';
import type { Totals } from '../domain/totals';
import { LISTING_INDEXES, type CrmModels } from './models';

/** What `project` writes: the totals (when recomputed), the seller's category, the interaction's time. */
export interface ProjectedChange {
  totals?: Totals;
  sellerCategory?: string;
  interactionAt?: Date;
}

/**
 * What a pair's first event creates besides the pair (its filter) and what the event writes: new
 * ids and the schema's defaults, as plain values (no mongoose document per event).
 * `test/db-records.unit.test.ts` pins them to the schema's defaults.
 */
export function newRelationshipFields(now: Date): Omit<Relationship, 'sellerId' | 'buyerId' | 'updatedAt'> {
  return {
    _id: newInternalId('cus'),
    referenceId: newUnderscoreReference('CUS'),
    status: 'Active',
    customerType: 'New',
    isFollower: false,
    followStatus: 'NotFollowing',
    notificationPreference: 'All',
    notes: '',
    tags: [],
    isFavorite: false,
    followedAt: null,
    markedFavoriteAt: null,
    sellerCategory: null,
    totalBookings: 0,
    totalSpentMinor: 0,
    lifetimeValueMinor: 0,
    lastInteraction: null,
    lastBooking: null,
    pendingEvents: [],
    createdAt: now,
  };
}

/** A create that the pair's unique index refused (the pair has a relationship already). */
export const DUPLICATE = Symbol('duplicate');

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

/**
 * Each listing's sort: its index's keys after the owner's (`LISTING_INDEXES`), in their order,
 * ending in `_id` so relationships of equal keys (same value, same instant, no interaction yet)
 * keep one order and a page boundary never repeats or skips one.
 */
const SORT: Record<Listing, Record<string, 1 | -1>> = {
  customers: { lastInteraction: -1, createdAt: -1, _id: -1 },
  followers: { followedAt: -1, _id: -1 },
  favorites: { markedFavoriteAt: -1, _id: -1 },
  'high-value': { lifetimeValueMinor: -1, _id: -1 },
  relationships: { createdAt: -1, _id: -1 },
  following: { followedAt: -1, _id: -1 },
  'buyer-customers': { lastBooking: -1, _id: -1 },
};

/**
 * Each listing's index, hinted: its owner's key then its sort, partial only where the listing's
 * filter requires the index's condition (followers and following `isFollower: true`, favorites
 * `isFavorite: true`, buyer-customers `totalBookings > 0`), so it serves every read of that listing.
 */
const LISTING_INDEX: Record<Listing, string> = {
  customers: LISTING_INDEXES.sellerCustomers.name,
  followers: LISTING_INDEXES.sellerFollowers.name,
  favorites: LISTING_INDEXES.sellerFavorites.name,
  'high-value': LISTING_INDEXES.sellerHighValue.name,
  relationships: LISTING_INDEXES.buyerNewest.name,
  following: LISTING_INDEXES.buyerFollowing.name,
  'buyer-customers': LISTING_INDEXES.buyerCustomers.name,
};

/** `GET /customers`: newest first, `_id` between equal instants (as the listings). */
const OWN_SORT = { createdAt: -1, _id: -1 } as const;

/** The index of a scope's `GET /customers` (its owner's key, then `OWN_SORT`; the optional filters are checked on each). */
function ownIndexOf(scope: Partial<Pair>): string {
  if (scope.sellerId !== undefined) return LISTING_INDEXES.sellerNewest.name;
  if (scope.buyerId !== undefined) return LISTING_INDEXES.buyerNewest.name;
  return LISTING_INDEXES.newest.name;
}

/** What the seller analytics read of each relationship. */
export type AnalyticsRow = Pick<Relationship, 'status' | 'isFollower' | 'totalBookings' | 'totalSpentMinor'>;

/** Every query of `relationships` (one per pair: a unique index). */
export class RelationshipRepository {
  constructor(private readonly models: Pick<CrmModels, 'relationships'>) {}

  /** The relationship of a key: its id or its `CUS_…` reference. */
  async find(key: string): Promise<Relationship | null> {
    return this.models.relationships.findOne(byIdOrReference(key)).lean<Relationship>();
  }

  async get(id: string): Promise<Relationship | null> {
    return this.models.relationships.findById(id).lean<Relationship>();
  }

  /** An audit entry the new record carries is published right after the insert (`eventsWritten`). */
  async insert(relationship: NewRelationship): Promise<void | typeof DUPLICATE> {
    try {
      await this.models.relationships.create(relationship);
    } catch (err) {
      if (isDuplicateKey(err)) return DUPLICATE;
      throw err;
    }
    if (relationship.pendingEvents?.length) eventsWritten(this.models.relationships, relationship._id);
  }

  /** The pair's relationship, made (Active, New, no totals) where events meet a pair nobody created by hand. */
  async ensure({ sellerId, buyerId }: Pair): Promise<void> {
    if (await this.models.relationships.exists({ sellerId, buyerId })) return;
    // Of two events of a new pair, one creates it.
    await this.insert({ _id: newInternalId('cus'), referenceId: newUnderscoreReference('CUS'), sellerId, buyerId });
  }

  /**
   * The changed relationship, or null when it went away or its guard missed meanwhile. An audit
   * entry the write pushed is published right after it (`eventsWritten`).
   */
  async write(id: string, write: RelationshipWrite): Promise<Relationship | null> {
    const filter: FilterQuery<Relationship> = { _id: id, ...write.expect };
    const update: UpdateQuery<Relationship> = { $set: write.set, ...(write.event ? { $push: { pendingEvents: write.event } } : {}) };
    const saved = await this.models.relationships.findOneAndUpdate(filter, update, { new: true }).lean<Relationship>();
    if (saved && write.event) eventsWritten(this.models.relationships, saved);
    return saved;
  }

  async setTotals({ sellerId, buyerId }: Pair, totals: Totals): Promise<void> {
    await this.models.relationships.updateOne({ sellerId, buyerId }, { $set: totals });
  }

  /**
   * What one event changes in a pair's relationship, in one upsert on the pair's unique index
   * (it was an `exists`, maybe an insert, and up to three updates): made (Active, New:
   * the schema's defaults) where none exists, the totals and the seller's category set,
   * `lastInteraction` moved forward only (`$max`: a late event of an earlier time changes
   * nothing). The driver's own update: every value here is the projection's, not a client's.
   */
  async project({ sellerId, buyerId }: Pair, change: ProjectedChange, now = new Date()): Promise<void> {
    const set: Record<string, unknown> = { ...change.totals, updatedAt: now };
    if (change.sellerCategory) set.sellerCategory = change.sellerCategory;
    const update: Record<string, unknown> = { $set: set };
    if (change.interactionAt) update.$max = { lastInteraction: change.interactionAt };
    const model = this.models.relationships;
    const touched = new Set([...Object.keys(update.$set as object), ...Object.keys((update.$max as object | undefined) ?? {})]);
    update.$setOnInsert = Object.fromEntries(Object.entries(newRelationshipFields(now)).filter(([field]) => !touched.has(field)));
    try {
      await model.collection.updateOne({ sellerId, buyerId }, update, { upsert: true });
    } catch (err) {
      // Of two first events of a pair, one creates it; the other's write then finds it.
      if (!isDuplicateKey(err)) throw err;
      await model.collection.updateOne({ sellerId, buyerId }, { $set: set, ...(update.$max ? { $max: update.$max } : {}) });
    }
  }

  /** One page of a seller's or a buyer's listing. */
  async listing(kind: Listing, ownerId: string, query: PageQuery & { minLifetimeValueMinor?: number }): Promise<Page<Relationship>> {
    return findPage<Relationship>(
      this.models.relationships,
      listingFilter(kind, ownerId, query.minLifetimeValueMinor ?? 0),
      query,
      SORT[kind],
      LISTING_INDEX[kind],
    );
  }

  /**
   * GET /customers: the relationships of a scope (`ownScope`), with the optional filters, newest
   * first, through the scope's index (a seller's, a buyer's, or every one's for an admin).
   */
  async ownPage(scope: Partial<Pair>, query: PageQuery & { status?: string; customerType?: string }): Promise<Page<Relationship>> {
    const filter: Record<string, unknown> = { ...scope };
    if (query.status) filter.status = query.status;
    if (query.customerType) filter.customerType = query.customerType;
    return findPage<Relationship>(this.models.relationships, filter, query, OWN_SORT, ownIndexOf(scope));
  }

  async analyticsRows(sellerId: string): Promise<AnalyticsRow[]> {
    return this.models.relationships
      .find({ sellerId }, { status: 1, isFollower: 1, totalBookings: 1, totalSpentMinor: 1 })
      .lean<AnalyticsRow[]>();
  }
}
