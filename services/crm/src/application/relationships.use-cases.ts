import {
  newInternalId,
  newUnderscoreReference,
  type AdminRequestContext,
  type CreateCustomerBody,
  type PageQuery,
  type UpdateCustomerBody,
} from '@mkt/contracts/crm';
import { Conflict, foundOr404 } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import type { Page } from '@mkt/kit/db';
import type { RecordDeletes } from '@mkt/kit/bus';
import type { BookingFactRepository } from '../db/booking-fact.repository';
import { DUPLICATE, type RelationshipRepository } from '../db/relationship.repository';
import type { KnownUserRepository } from '../db/user.repository';
import {
  assertDeleter,
  assertReader,
  auditedCreate,
  createFollow,
  decideCreate,
  decideUpdate,
  found,
  isAdmin,
  listingOwner,
  ownScope,
  relationshipDeletion,
  relationshipWrite,
  resolveBuyer,
  resolveSeller,
  type Listing,
} from '../domain/relationships';
import type { Relationship } from '../domain/records';
import { PairTaken } from '../domain/errors';
import { analyticsOf, type Analytics } from '../domain/totals';
import type { Projection } from './projection.use-cases';

/** The whole relationship with both names, as the detail and the listings read it. */
export interface RelationshipRow {
  doc: Relationship;
  buyerName: string | null;
  sellerName: string | null;
}

/**
 * Customer relationships: who may create, read, change and list them (domain/relationships.ts).
 * An admin's create or update carries its audit entry in its own write (`auditedCreate`,
 * `relationshipWrite`), an admin's delete in the delete's tombstone (`relationshipDeletion`).
 */
export class Relationships {
  constructor(
    private readonly relationships: RelationshipRepository,
    private readonly users: KnownUserRepository,
    private readonly facts: BookingFactRepository,
    private readonly projection: Projection,
    private readonly deletes: Pick<RecordDeletes, 'delete'>,
  ) {}

  async create(user: AuthenticatedUser, body: CreateCustomerBody, context: AdminRequestContext): Promise<Relationship> {
    const sellerId = resolveSeller(user, body, isAdmin(user) ? await this.users.find(body.sellerId) : null);
    const follow = createFollow(user, body);
    // Both lookups run for every key, so the refusals do not differ in the work done.
    const named = await this.users.find(body.buyerId);
    const booked = await this.facts.hasConfirmed({ sellerId, buyerId: named?._id ?? body.buyerId });
    const pair = { sellerId, buyerId: resolveBuyer(named, booked) };
    const ids = { id: newInternalId('cus'), referenceId: newUnderscoreReference('CUS') };
    const now = new Date();
    const record = auditedCreate(user, decideCreate(body, pair, follow, ids, now), context, now);
    if ((await this.relationships.insert(record)) === DUPLICATE) throw new PairTaken();
    // The pair has booked (that is what lets it be named): its totals follow from those bookings
    // at once, as they would in the relationship the events open.
    await this.projection.recompute(pair);
    return foundOr404(await this.relationships.get(ids.id), 'Customer relationship');
  }

  async read(user: AuthenticatedUser, id: string): Promise<RelationshipRow> {
    const doc = found(await this.relationships.find(id));
    assertReader(user, doc);
    return (await this.withNames([doc]))[0]!;
  }

  async update(user: AuthenticatedUser, id: string, body: UpdateCustomerBody, context: AdminRequestContext): Promise<Relationship> {
    const current = found(await this.relationships.find(id));
    const now = new Date();
    const write = relationshipWrite(user, current, decideUpdate(user, current, body, now), context, now);
    const saved = await this.relationships.write(current._id, write);
    if (saved) return saved;
    foundOr404(await this.relationships.find(current._id), 'Customer');
    throw new Conflict('The relationship changed while it was edited: read it again');
  }

  /**
   * Through the record deletes (`RecordDeletes`): an admin's delete records its audit entry with
   * it (`relationshipDeletion`); a change or another delete landing in between makes it miss
   * (409 while the relationship is there, 404 once it is gone).
   */
  async remove(user: AuthenticatedUser, id: string, context: AdminRequestContext): Promise<string> {
    const current = found(await this.relationships.find(id));
    assertDeleter(user, current);
    const { guard, entry } = relationshipDeletion(user, current, context, new Date());
    if (await this.deletes.delete(current._id, guard, entry)) return current._id;
    foundOr404(await this.relationships.get(current._id), 'Customer relationship');
    throw new Conflict('The relationship changed while it was deleted: read it again');
  }

  async listing(
    user: AuthenticatedUser,
    kind: Listing,
    ownerKey: string,
    query: PageQuery & { minLifetimeValueMinor?: number },
  ): Promise<{ rows: RelationshipRow[]; total: number; pagination: Page<Relationship>['pagination'] }> {
    const page = await this.relationships.listing(kind, await this.ownerOf(user, ownerKey), query);
    return { rows: await this.withNames(page.items), total: page.pagination.total, pagination: page.pagination };
  }

  /** GET /customers: a seller's customers, a buyer's relationships, or everything for an admin. */
  async ownList(
    user: AuthenticatedUser,
    query: PageQuery & { status?: string; customerType?: string },
  ): Promise<{ rows: RelationshipRow[]; pagination: Page<Relationship>['pagination'] }> {
    const page = await this.relationships.ownPage(ownScope(user), query);
    return { rows: await this.withNames(page.items), pagination: page.pagination };
  }

  async sellerAnalytics(user: AuthenticatedUser, sellerKey: string): Promise<Analytics> {
    return analyticsOf(await this.relationships.analyticsRows(await this.ownerOf(user, sellerKey)));
  }

  /** The user id a listing path names (id or reference): the caller's own, or anyone's for an admin. */
  private async ownerOf(user: AuthenticatedUser, key: string): Promise<string> {
    return listingOwner(user, key) ?? (await this.users.find(key))?._id ?? key;
  }

  private async withNames(docs: Relationship[]): Promise<RelationshipRow[]> {
    const names = await this.users.names([...new Set(docs.flatMap((doc) => [doc.sellerId, doc.buyerId]))]);
    return docs.map((doc) => ({ doc, buyerName: names.get(doc.buyerId) ?? null, sellerName: names.get(doc.sellerId) ?? null }));
  }
}
