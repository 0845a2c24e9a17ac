import {
  newReference,
  type AdminRequestContext,
  type CreateProductBody,
  type DraftBody,
  type PageQuery,
  type ProductListQuery,
  type UpdateDraftBody,
  type UpdateProductBody,
  type Visibility,
} from '@mkt/contracts/catalog';
import { Conflict, foundOr404 } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import type { Page } from '@mkt/kit/db';
import type { RecordDeletes } from '@mkt/kit/bus';
import type { ProductRepository } from '../db/product.repository';
import { ownedBy, productDeletion, productWrite, visibleTo, type ProductChange, type ProductRules } from '../domain/products';
import type { Product } from '../domain/records';

/**
 * Seller products and drafts: read, let the rules decide, write through the repository. An
 * admin's change of another seller's product carries its audit entry in the same write (`productWrite`).
 */
export class Products {
  constructor(
    private readonly products: ProductRepository,
    private readonly rules: ProductRules,
    private readonly referencePrefix: string,
    private readonly deletes: Pick<RecordDeletes, 'delete'>,
  ) {}

  async create(user: AuthenticatedUser, body: CreateProductBody): Promise<Product> {
    return this.products.insert(this.rules.decideCreate(user, body, this.newId()));
  }

  async createDraft(user: AuthenticatedUser, body: DraftBody): Promise<Product> {
    return this.products.insert(this.rules.decideCreateDraft(user, body, this.newId()));
  }

  list(query: ProductListQuery): Promise<Page<Product>> {
    return this.products.listPublic(query);
  }

  mine(user: AuthenticatedUser, query: PageQuery): Promise<Page<Product>> {
    return this.products.listBySeller(user.id, query);
  }

  async detail(user: AuthenticatedUser | undefined, referenceId: string): Promise<Product> {
    return visibleTo(user, await this.products.get(referenceId));
  }

  async update(
    user: AuthenticatedUser,
    referenceId: string,
    body: UpdateProductBody,
    raw: unknown,
    context: AdminRequestContext,
  ): Promise<Product> {
    const current = await this.owned(user, referenceId);
    return this.save(user, current, this.rules.decideUpdate(current, body, raw), 'product.edit', context);
  }

  async updateDraft(user: AuthenticatedUser, referenceId: string, body: UpdateDraftBody, context: AdminRequestContext): Promise<Product> {
    const current = await this.owned(user, referenceId);
    return this.save(user, current, this.rules.decideUpdateDraft(current, body), 'product.edit', context);
  }

  /** Any move between Public, Hidden and Private is allowed. */
  async setVisibility(
    user: AuthenticatedUser,
    referenceId: string,
    visibility: Visibility,
    context: AdminRequestContext,
  ): Promise<Product> {
    const current = await this.owned(user, referenceId);
    return this.save(user, current, { visibility }, 'product.visibility', context);
  }

  /**
   * Through the record deletes (`RecordDeletes`): an admin's delete of another seller's product
   * records its audit entry with it (`productDeletion`); a change or another delete landing in
   * between makes it miss (409 while the product is there, 404 once it is gone).
   */
  async remove(user: AuthenticatedUser, referenceId: string, context: AdminRequestContext): Promise<void> {
    const current = await this.owned(user, referenceId);
    const { expect, entry } = productDeletion(user, current, context, new Date());
    if (await this.deletes.delete(current._id, expect, entry)) return;
    foundOr404(await this.products.get(current._id), 'Product');
    throw new Conflict('The product changed while it was deleted: read it again');
  }

  private async owned(user: AuthenticatedUser, referenceId: string): Promise<Product> {
    return ownedBy(user, await this.products.get(referenceId));
  }

  private async save(
    user: AuthenticatedUser,
    current: Product,
    set: ProductChange,
    action: 'product.edit' | 'product.visibility',
    context: AdminRequestContext,
  ): Promise<Product> {
    const write = productWrite(user, current, set, action, context, new Date());
    const saved = await this.products.write(current._id, write);
    if (saved) return saved;
    foundOr404(await this.products.get(current._id), 'Product');
    throw new Conflict('The product changed while it was edited: read it again');
  }

  private newId(): string {
    return newReference('SELL-PROD', this.referencePrefix);
  }
}
