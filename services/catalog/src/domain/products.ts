import {
  CreateProductBody,
  ErrorCode,
  escapeRegex,
  newReference,
  type DraftBody,
  type ErrorItem,
  type PageQuery,
  type Pagination,
  type ProductListQuery,
  type UpdateDraftBody,
  type UpdateProductBody,
  type Visibility,
} from '@mkt/contracts';
import { AppError, Forbidden, InvalidState, NotFound, type AuthenticatedUser, findPage } from '@mkt/kit';
import { Product, type ProductDoc, type ProductProperty } from '../db/product.model';
import { propertyValueProblem, type Category } from './categories';
import { sanitizeDescription } from './sanitize';

/** 422: well-formed fields that do not fit the category or each other (DESIGN §5, contracts `RULE`). */
class InvalidProduct extends AppError {
  constructor(items: ErrorItem[]) {
    super(422, ErrorCode.invalid, 'Validation failed', items);
  }
}

type PropertyInput = { propertyId: string; value: string | number | boolean };

const SORTS = {
  newest: { createdAt: -1 },
  price_asc: { sellingPriceMinor: 1, createdAt: -1 },
  price_desc: { sellingPriceMinor: -1, createdAt: -1 },
} as const;

/** Seller products and drafts: who may see and change them, and what a valid product is. */
export class Products {
  private readonly categories: Map<string, Category>;

  constructor(
    categories: Category[],
    private readonly referencePrefix: string,
  ) {
    this.categories = new Map(categories.map((category) => [category.id, category]));
  }

  async create(user: AuthenticatedUser, body: CreateProductBody): Promise<ProductDoc> {
    assertSeller(user);
    const fields = this.productFields(body);
    return (
      await Product.create({ _id: newReference('SELL-PROD', this.referencePrefix), sellerId: user.id, isDraft: false, ...fields })
    ).toObject();
  }

  async list(query: ProductListQuery): Promise<{ items: ProductDoc[]; pagination: Pagination }> {
    const filter: Record<string, unknown> = { isDraft: false, visibility: 'Public' };
    if (query.categoryId) filter.categoryId = query.categoryId;
    if (query.q) {
      const pattern = new RegExp(escapeRegex(query.q), 'i');
      filter.$or = [{ name: pattern }, { descriptionHtml: pattern }];
    }
    const price: Record<string, number> = {};
    if (query.minPriceMinor !== undefined) price.$gte = query.minPriceMinor;
    if (query.maxPriceMinor !== undefined) price.$lte = query.maxPriceMinor;
    if (Object.keys(price).length > 0) filter.sellingPriceMinor = price;
    return this.page(filter, query, SORTS[query.sort]);
  }

  async mine(user: AuthenticatedUser, query: PageQuery): Promise<{ items: ProductDoc[]; pagination: Pagination }> {
    return this.page({ sellerId: user.id }, query, SORTS.newest);
  }

  /** Public products to anyone; hidden, private and drafts only to their seller or an admin. */
  async detail(user: AuthenticatedUser | undefined, referenceId: string): Promise<ProductDoc> {
    const product = await Product.findById(referenceId).lean<ProductDoc>();
    if (!product || (!canManage(user, product) && (product.isDraft || product.visibility !== 'Public'))) throw new NotFound('Product');
    return product;
  }

  /** A partial update; on a draft, the full fields publish it (checked like a create). */
  async update(user: AuthenticatedUser, referenceId: string, body: UpdateProductBody, raw: unknown): Promise<ProductDoc> {
    const current = await this.owned(user, referenceId);
    if (current.isDraft) {
      const full = CreateProductBody.parse(raw);
      return this.save(referenceId, { ...this.productFields(full), isDraft: false, metaData: null });
    }
    const merged = {
      sellingPrice: body.sellingPriceMinor ?? current.sellingPriceMinor!,
      comparePrice: body.comparePriceMinor ?? current.comparePriceMinor ?? undefined,
    };
    if (merged.comparePrice !== undefined && merged.comparePrice < merged.sellingPrice) {
      throw new InvalidProduct([{ path: 'comparePrice', code: ErrorCode.invalid, message: 'comparePrice must be at least sellingPrice' }]);
    }
    const set: Partial<ProductDoc> = {};
    if (body.name !== undefined) set.name = body.name;
    if (body.description !== undefined) set.descriptionHtml = sanitizeDescription(body.description);
    if (body.sellingPriceMinor !== undefined) set.sellingPriceMinor = body.sellingPriceMinor;
    if (body.comparePriceMinor !== undefined) set.comparePriceMinor = body.comparePriceMinor;
    if (body.stock !== undefined) set.stock = body.stock;
    if (body.discountCode !== undefined) set.discountCode = body.discountCode;
    if (body.discountPercentage !== undefined) set.discountPercentage = body.discountPercentage;
    if (body.shippingHandler !== undefined) set.shippingHandler = body.shippingHandler;
    if (body.deliveryCostMinor !== undefined) set.deliveryCostMinor = body.deliveryCostMinor;
    if (body.visibility !== undefined) set.visibility = body.visibility;
    if (body.categoryId !== undefined || body.properties !== undefined) {
      set.categoryId = body.categoryId ?? current.categoryId;
      const inputs = body.properties ?? current.properties.map(({ propertyId, value }) => ({ propertyId, value }));
      set.properties = this.resolveProperties(set.categoryId, inputs);
    }
    return this.save(referenceId, set);
  }

  async setVisibility(user: AuthenticatedUser, referenceId: string, visibility: Visibility): Promise<ProductDoc> {
    await this.owned(user, referenceId);
    return this.save(referenceId, { visibility });
  }

  async remove(user: AuthenticatedUser, referenceId: string): Promise<void> {
    await this.owned(user, referenceId);
    await Product.deleteOne({ _id: referenceId });
  }

  async createDraft(user: AuthenticatedUser, body: DraftBody): Promise<ProductDoc> {
    assertSeller(user);
    this.category(body.categoryId, 'categoryId');
    const draft = {
      _id: newReference('SELL-PROD', this.referencePrefix),
      sellerId: user.id,
      isDraft: true,
      categoryId: body.categoryId,
      metaData: body.metaData,
      visibility: 'Private',
    };
    return (await Product.create(draft)).toObject();
  }

  async updateDraft(user: AuthenticatedUser, referenceId: string, body: UpdateDraftBody): Promise<ProductDoc> {
    const current = await this.owned(user, referenceId);
    if (!current.isDraft)
      throw new InvalidState('This product is published; update it with PATCH /physical-products/seller-products/{referenceId}');
    if (body.categoryId) this.category(body.categoryId, 'categoryId');
    return this.save(referenceId, {
      ...(body.categoryId ? { categoryId: body.categoryId } : {}),
      ...(body.metaData ? { metaData: body.metaData } : {}),
    });
  }

  private productFields(body: CreateProductBody) {
    return {
      name: body.name,
      descriptionHtml: sanitizeDescription(body.description),
      sellingPriceMinor: body.sellingPriceMinor,
      comparePriceMinor: body.comparePriceMinor ?? null,
      stock: body.stock,
      discountCode: body.discountCode ?? null,
      discountPercentage: body.discountPercentage ?? 0,
      shippingHandler: body.shippingHandler,
      deliveryCostMinor: body.deliveryCostMinor ?? 0,
      categoryId: body.categoryId,
      properties: this.resolveProperties(body.categoryId, body.properties ?? []),
      visibility: body.visibility ?? 'Public',
    };
  }

  /** Every property must belong to the category and fit its type; names are snapshotted. */
  private resolveProperties(categoryId: string, inputs: PropertyInput[]): ProductProperty[] {
    const category = this.category(categoryId, 'categoryId');
    const problems: ErrorItem[] = [];
    const seen = new Set<string>();
    const resolved = inputs.map((input, index) => {
      const property = category.properties.find((candidate) => candidate.id === input.propertyId);
      if (!property)
        problems.push({ path: `properties.${index}.propertyId`, code: ErrorCode.invalid, message: `Not a property of ${category.name}` });
      else if (seen.has(property.id))
        problems.push({ path: `properties.${index}.propertyId`, code: ErrorCode.invalid, message: 'Sent twice' });
      else {
        const problem = propertyValueProblem(property, input.value);
        if (problem) problems.push({ path: `properties.${index}.value`, code: ErrorCode.invalid, message: problem });
      }
      if (property) seen.add(property.id);
      return { propertyId: input.propertyId, value: input.value, propertyNameSnapshot: property?.name ?? '' };
    });
    if (problems.length > 0) throw new InvalidProduct(problems);
    return resolved;
  }

  private category(id: string, path: string): Category {
    const category = this.categories.get(id);
    if (!category) throw new InvalidProduct([{ path, code: ErrorCode.invalid, message: 'No such category' }]);
    return category;
  }

  private async owned(user: AuthenticatedUser, referenceId: string): Promise<ProductDoc> {
    const product = await Product.findById(referenceId).lean<ProductDoc>();
    if (!product) throw new NotFound('Product');
    if (canManage(user, product)) return product;
    // Others learn nothing of what they may not see.
    if (product.isDraft || product.visibility !== 'Public') throw new NotFound('Product');
    throw new Forbidden('This product belongs to another seller');
  }

  private async save(referenceId: string, set: Record<string, unknown>): Promise<ProductDoc> {
    const saved = await Product.findOneAndUpdate({ _id: referenceId }, { $set: set }, { new: true }).lean<ProductDoc>();
    if (!saved) throw new NotFound('Product');
    return saved;
  }

  private async page(filter: Record<string, unknown>, query: PageQuery, sort: Record<string, 1 | -1>) {
    return findPage(Product, filter, query, sort);
  }
}

function canManage(user: AuthenticatedUser | undefined, product: ProductDoc): boolean {
  return user !== undefined && (user.role === 'admin' || user.id === product.sellerId);
}

function assertSeller(user: AuthenticatedUser): void {
  if (user.role !== 'seller' && user.role !== 'admin') throw new Forbidden('Only sellers list products');
}
