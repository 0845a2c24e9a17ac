import {
  newReference,
  type CreateProductBody,
  type DraftBody,
  type PageQuery,
  type ProductListQuery,
  type UpdateDraftBody,
  type UpdateProductBody,
  type Visibility,
} from '@mkt/contracts';
import { foundOr404, type AuthenticatedUser, type Page } from '@mkt/kit';
import type { ProductRepository } from '../db/product.repository';
import { ownedBy, visibleTo, type Product, type ProductChange, type ProductRules } from '../domain/products';

/** Seller products and drafts: read, let the rules decide, write through the repository. */
export class ProductService {
  constructor(
    private readonly products: ProductRepository,
    private readonly rules: ProductRules,
    private readonly referencePrefix: string,
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

  async update(user: AuthenticatedUser, referenceId: string, body: UpdateProductBody, raw: unknown): Promise<Product> {
    const current = await this.owned(user, referenceId);
    return this.save(referenceId, this.rules.decideUpdate(current, body, raw));
  }

  async updateDraft(user: AuthenticatedUser, referenceId: string, body: UpdateDraftBody): Promise<Product> {
    const current = await this.owned(user, referenceId);
    return this.save(referenceId, this.rules.decideUpdateDraft(current, body));
  }

  /** Any move between Public, Hidden and Private is allowed. */
  async setVisibility(user: AuthenticatedUser, referenceId: string, visibility: Visibility): Promise<Product> {
    await this.owned(user, referenceId);
    return this.save(referenceId, { visibility });
  }

  async remove(user: AuthenticatedUser, referenceId: string): Promise<void> {
    await this.owned(user, referenceId);
    await this.products.remove(referenceId);
  }

  private async owned(user: AuthenticatedUser, referenceId: string): Promise<Product> {
    return ownedBy(user, await this.products.get(referenceId));
  }

  private async save(referenceId: string, set: ProductChange): Promise<Product> {
    return foundOr404(await this.products.update(referenceId, set), 'Product');
  }

  private newId(): string {
    return newReference('SELL-PROD', this.referencePrefix);
  }
}
