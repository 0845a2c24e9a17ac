import {
  adminActionData,
  CreateProductBody,
  ErrorCode,
  makeEvent,
  type AdminRequestContext,
  type IntegrationEvent,
  type DraftBody,
  type ErrorItem,
  type UpdateDraftBody,
  type UpdateProductBody,
} from '@mkt/contracts/catalog';
import type { ProductProperty, Product } from './records';
import { Forbidden, InvalidState, NotFound } from '@mkt/kit/domain';
import { InvalidProduct } from './errors';
import type { Actor } from './actor';
import { propertyValueProblem, type Category } from './categories';
import { sanitizeDescription } from './sanitize';

/** What a create writes (the timestamps are the database's). */
export type NewProduct = Pick<Product, '_id' | 'sellerId' | 'isDraft' | 'categoryId' | 'visibility'> &
  Partial<Omit<Product, 'createdAt' | 'updatedAt'>>;

/** The fields a change sets. */
export type ProductChange = Partial<Omit<Product, '_id' | 'sellerId' | 'createdAt' | 'updatedAt' | 'pendingEvents'>>;

/**
 * What a product's write must still find (beyond its id): nothing, or the `updatedAt` the
 * decision read. The repository turns it into the write's filter.
 */
export type ProductExpectation = Partial<Pick<Product, 'updatedAt'>>;

/** A change as one write: what the record must still hold, the fields it sets, the audit entry it raises (into the outbox). */
export interface ProductWrite {
  expect: ProductExpectation;
  set: ProductChange;
  event?: IntegrationEvent;
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * How a change is written. Its seller's own change is the plain update. An admin's change of
 * another seller's product carries its audit entry (`product.edit`, `product.visibility`: the
 * fields it changes, before and after) in the product's outbox, in the same write; that write is
 * guarded by the `updatedAt` read, so the before recorded is what the change replaced (a change
 * landing in between makes it miss: 409, nothing written, nothing recorded).
 */
export function productWrite(
  user: Actor,
  current: Product,
  set: ProductChange,
  action: 'product.edit' | 'product.visibility',
  context: AdminRequestContext,
  now: Date,
): ProductWrite {
  if (user.role !== 'admin' || user.id === current.sellerId) return { expect: {}, set };
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(set)) {
    const old = current[field as keyof Product];
    if (sameValue(old, value)) continue;
    before[field] = old ?? null;
    after[field] = value ?? null;
  }
  const data = adminActionData(user, action, { type: 'product', id: current._id }, context, now, { before, after });
  const event = makeEvent('catalog.admin_action.recorded', data, { source: 'catalog', correlationId: context.requestId });
  return { expect: { updatedAt: current.updatedAt }, set, event };
}

/** A delete as the record deletes take it: the state it must still be in, and the event it records. */
export interface ProductDeletion {
  expect: ProductExpectation;
  entry: IntegrationEvent | null;
}

/**
 * How a delete is taken. Its seller's own is the plain one (no guard, nothing recorded). An
 * admin's delete of another seller's product records its audit entry (`product.delete`: before,
 * what the product was) and is guarded by the `updatedAt` read, so a change landing in between
 * makes it miss (409, nothing deleted, nothing recorded).
 */
export function productDeletion(user: Actor, current: Product, context: AdminRequestContext, now: Date): ProductDeletion {
  if (user.role !== 'admin' || user.id === current.sellerId) return { expect: {}, entry: null };
  const { _id, pendingEvents: _pending, createdAt: _createdAt, updatedAt: _updatedAt, ...fields } = current;
  const before = Object.fromEntries(Object.entries(fields).map(([field, value]) => [field, value ?? null]));
  const data = adminActionData(user, 'product.delete', { type: 'product', id: _id }, context, now, { before, after: null });
  const entry = makeEvent('catalog.admin_action.recorded', data, { source: 'catalog', correlationId: context.requestId });
  return { expect: { updatedAt: current.updatedAt }, entry };
}

type PropertyInput = { propertyId: string; value: string | number | boolean };

/** Creating is the sellers' (and an admin's): a buyer's create is 403. */
export function assertSeller(user: Actor, message = 'Only sellers list products'): void {
  if (user.role !== 'seller' && user.role !== 'admin') throw new Forbidden(message);
}

/** Its seller and an admin manage a product (and see it whatever its visibility). */
export function canManage(user: Actor | undefined, product: Pick<Product, 'sellerId'>): boolean {
  return user !== undefined && (user.role === 'admin' || user.id === product.sellerId);
}

/** Published and Public: what anyone sees and the public listing shows. */
export function isPublic(product: Pick<Product, 'isDraft' | 'visibility'>): boolean {
  return !product.isDraft && product.visibility === 'Public';
}

/** Public products to anyone; hidden, private and drafts only to their seller or an admin (404 to others). */
export function visibleTo(user: Actor | undefined, product: Product | null): Product {
  if (!product || (!canManage(user, product) && !isPublic(product))) throw new NotFound('Product');
  return product;
}

/**
 * A product its caller may change: its seller's or any for an admin. Others learn nothing of
 * what they may not see (404); a Public product of another seller is 403.
 */
export function ownedBy(user: Actor, product: Product | null): Product {
  if (!product) throw new NotFound('Product');
  if (canManage(user, product)) return product;
  if (!isPublic(product)) throw new NotFound('Product');
  throw new Forbidden('This product belongs to another seller');
}

/** The category tree and what a valid product is against it. */
export class ProductRules {
  private readonly categories: Map<string, Category>;

  constructor(categories: Category[]) {
    this.categories = new Map(categories.map((category) => [category.id, category]));
  }

  /** A new published product of `user` (a seller or an admin) with the reference `id`. */
  decideCreate(user: Actor, body: CreateProductBody, id: string): NewProduct {
    assertSeller(user);
    return { _id: id, sellerId: user.id, isDraft: false, ...this.productFields(body) };
  }

  /** A new draft: a category that exists and the seller's form, Private. */
  decideCreateDraft(user: Actor, body: DraftBody, id: string): NewProduct {
    assertSeller(user);
    this.category(body.categoryId, 'categoryId');
    return { _id: id, sellerId: user.id, isDraft: true, categoryId: body.categoryId, metaData: body.metaData, visibility: 'Private' };
  }

  /**
   * A partial update of a product its caller owns; on a draft, the full fields (`raw`, checked
   * like a create) publish it. The merged prices are checked; changing the category or the
   * properties re-checks the properties.
   */
  decideUpdate(current: Product, body: UpdateProductBody, raw: unknown): ProductChange {
    if (current.isDraft) {
      const full = CreateProductBody.parse(raw);
      return { ...this.productFields(full), isDraft: false, metaData: null };
    }
    const merged = {
      sellingPrice: body.sellingPriceMinor ?? current.sellingPriceMinor!,
      comparePrice: body.comparePriceMinor ?? current.comparePriceMinor ?? undefined,
    };
    if (merged.comparePrice !== undefined && merged.comparePrice < merged.sellingPrice) {
      throw new InvalidProduct([{ path: 'comparePrice', code: ErrorCode.invalid, message: 'comparePrice must be at least sellingPrice' }]);
    }
    const set: ProductChange = {};
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
    return set;
  }

  /** A draft's category (which must exist) and form; a published product is 409. */
  decideUpdateDraft(current: Product, body: UpdateDraftBody): ProductChange {
    if (!current.isDraft)
      throw new InvalidState('This product is published; update it with PATCH /physical-products/seller-products/{referenceId}');
    if (body.categoryId) this.category(body.categoryId, 'categoryId');
    return {
      ...(body.categoryId ? { categoryId: body.categoryId } : {}),
      ...(body.metaData ? { metaData: body.metaData } : {}),
    };
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
      visibility: body.visibility ?? ('Public' as const),
    };
  }

  /** Every property must belong to the category, appear once and fit its type; names are snapshotted. */
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
}
