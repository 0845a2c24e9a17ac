import { CreateProductBody, UpdateProductBody, type Visibility } from '@mkt/contracts';
import { AppError } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import { buildCategories, propertyValueProblem, type Property } from '../../src/domain/categories';
import { canManage, isPublic, ownedBy, productDeletion, productWrite, ProductRules, visibleTo } from '../../src/domain/products';
import type { Product } from '../../src/domain/records';
import { sanitizeDescription } from '../../src/domain/sanitize';
import { decideShop, decideV1Product } from '../../src/domain/shops';

// The rules of the catalog's README, decided without a server or a database.

const user = (role: AuthenticatedUser['role'], id = `${role}-1`): AuthenticatedUser => ({
  id,
  ref: `MKT-USR-${id}`,
  role,
  email: '',
  name: '',
});
const seller = user('seller');
const rival = user('seller', 'seller-2');
const buyer = user('buyer');
const admin = user('admin');

const categories = buildCategories('MKT');
const rules = new ProductRules(categories);
const ELECTRONICS = 'MKT-CAT-ELECTRON';
const BOOKS = 'MKT-CAT-BOOKS000';
const BRAND = 'MKT-PRO-ELBRAND0';
const STORAGE = 'MKT-PRO-ELSTORAG';
const WARRANTY = 'MKT-PRO-ELWARRNT';
const AUTHOR = 'MKT-PRO-BOAUTHOR';

const at = new Date('2030-01-01T00:00:00Z');
const product = (over: Partial<Product> = {}): Product => ({
  _id: 'MKT-SELL-PROD-1',
  sellerId: seller.id,
  isDraft: false,
  categoryId: ELECTRONICS,
  name: 'Phone',
  descriptionHtml: '<p>ok</p>',
  sellingPriceMinor: 100_00,
  comparePriceMinor: null,
  stock: 1,
  discountCode: null,
  discountPercentage: 0,
  shippingHandler: 'Seller',
  deliveryCostMinor: 0,
  properties: [{ propertyId: BRAND, value: 'Acme', propertyNameSnapshot: 'Brand' }],
  visibility: 'Public',
  metaData: null,
  createdAt: at,
  updatedAt: at,
  ...over,
});
const body = (over: Record<string, unknown> = {}) =>
  CreateProductBody.parse({
    name: 'Phone',
    description: 'A phone',
    sellingPrice: 100,
    stock: 1,
    shippingHandler: 'Seller',
    categoryId: ELECTRONICS,
    ...over,
  });

/** The status an AppError answers, or 'ok' when the decision went through. */
function outcome(decide: () => unknown): number | 'ok' {
  try {
    decide();
    return 'ok';
  } catch (err) {
    if (err instanceof AppError) return err.status;
    throw err;
  }
}
const itemsOf = (decide: () => unknown) => {
  try {
    decide();
  } catch (err) {
    if (err instanceof AppError) return err.items;
  }
  return [];
};

describe("creating is the sellers' (and an admin's)", () => {
  test.each([
    ['seller', seller, 'ok'],
    ['admin', admin, 'ok'],
    ['buyer', buyer, 403],
  ] as const)('%s', (_name, who, expected) => {
    expect(outcome(() => rules.decideCreate(who, body(), 'id'))).toBe(expected);
    expect(outcome(() => rules.decideCreateDraft(who, { categoryId: ELECTRONICS, metaData: { form: '{}' } }, 'id'))).toBe(expected);
    expect(outcome(() => decideShop(who, { name: 'S', slug: 's', country: 'ET', category: 'c' }, 'id'))).toBe(expected);
    expect(outcome(() => decideV1Product(who, { title: 't', price: 100, currency: 'ETB', sku: 's', inventory: 1 }, 'id'))).toBe(expected);
  });

  test('the creator owns it; a new product is Public unless visibility is sent, a draft Private', () => {
    expect(rules.decideCreate(seller, body(), 'id')).toMatchObject({
      _id: 'id',
      sellerId: seller.id,
      isDraft: false,
      visibility: 'Public',
    });
    expect(rules.decideCreate(seller, body({ visibility: 'Hidden' }), 'id').visibility).toBe('Hidden');
    expect(rules.decideCreateDraft(seller, { categoryId: ELECTRONICS, metaData: { form: '{}' } }, 'id')).toMatchObject({
      isDraft: true,
      visibility: 'Private',
    });
    expect(decideV1Product(seller, { title: 't', price: 123, currency: 'ETB', sku: 's', inventory: 1 }, 'id')).toMatchObject({
      ownerId: seller.id,
      priceMinor: 123,
    });
  });
});

describe('who sees a product (detail): Public to anyone; Hidden, Private and drafts to their seller or an admin', () => {
  const cases: Array<[string, Partial<Product>, AuthenticatedUser | undefined, number | 'ok']> = [
    ['Public, anonymous', {}, undefined, 'ok'],
    ['Public, a buyer', {}, buyer, 'ok'],
    ['Hidden, anonymous', { visibility: 'Hidden' }, undefined, 404],
    ['Private, a buyer', { visibility: 'Private' }, buyer, 404],
    ['Private, a rival seller', { visibility: 'Private' }, rival, 404],
    ['Private, its seller', { visibility: 'Private' }, seller, 'ok'],
    ['Hidden, an admin', { visibility: 'Hidden' }, admin, 'ok'],
    ['a draft, a buyer', { isDraft: true, visibility: 'Public' }, buyer, 404],
    ['a draft, its seller', { isDraft: true }, seller, 'ok'],
  ];
  test.each(cases)('%s', (_name, over, who, expected) => {
    expect(outcome(() => visibleTo(who, product(over)))).toBe(expected);
  });
  test('nothing stored is 404', () => expect(outcome(() => visibleTo(admin, null))).toBe(404));
  test.each([
    [{}, true],
    [{ visibility: 'Hidden' as Visibility }, false],
    [{ isDraft: true }, false],
  ])('isPublic(%o) is %s (the public listing)', (over, expected) => expect(isPublic(product(over))).toBe(expected));
});

describe('who changes a product: its seller or an admin; others learn nothing of what they may not see', () => {
  const cases: Array<[string, Partial<Product>, AuthenticatedUser, number | 'ok']> = [
    ['its seller', {}, seller, 'ok'],
    ['an admin', { visibility: 'Private' }, admin, 'ok'],
    ['a rival, Public', {}, rival, 403],
    ['a buyer, Public', {}, buyer, 403],
    ['a rival, Hidden', { visibility: 'Hidden' }, rival, 404],
    ['a rival, a draft', { isDraft: true }, rival, 404],
  ];
  test.each(cases)('%s', (_name, over, who, expected) => {
    expect(outcome(() => ownedBy(who, product(over)))).toBe(expected);
    expect(canManage(who, product(over))).toBe(expected === 'ok');
  });
  test('nothing stored is 404', () => expect(outcome(() => ownedBy(seller, null))).toBe(404));
});

describe('categoryId must exist; properties belong to it, appear once and fit their type', () => {
  const cases: Array<[string, unknown[], string | null]> = [
    ['a text', [{ propertyId: BRAND, value: 'Acme' }], null],
    ['a select option', [{ propertyId: STORAGE, value: '64 GB' }], null],
    ['a number ≥ 0', [{ propertyId: WARRANTY, value: 12 }], null],
    ["another category's property", [{ propertyId: AUTHOR, value: 'X' }], 'properties.0.propertyId'],
    [
      'a property twice',
      [
        { propertyId: BRAND, value: 'A' },
        { propertyId: BRAND, value: 'B' },
      ],
      'properties.1.propertyId',
    ],
    ['not an option', [{ propertyId: STORAGE, value: '3 GB' }], 'properties.0.value'],
    ['a negative number', [{ propertyId: WARRANTY, value: -1 }], 'properties.0.value'],
    ['a number for a text', [{ propertyId: BRAND, value: 5 }], 'properties.0.value'],
  ];
  test.each(cases)('%s', (_name, properties, problemPath) => {
    const decide = () => rules.decideCreate(seller, body({ properties }), 'id');
    if (problemPath === null) expect(outcome(decide)).toBe('ok');
    else expect(itemsOf(decide).map((item) => item.path)).toContain(problemPath);
  });

  test('an unknown category is 422 on categoryId, for products and drafts', () => {
    const missing = 'MKT-CAT-NOTTHERE';
    expect(itemsOf(() => rules.decideCreate(seller, body({ categoryId: missing }), 'id'))).toEqual([
      expect.objectContaining({ path: 'categoryId', message: 'No such category' }),
    ]);
    expect(outcome(() => rules.decideCreateDraft(seller, { categoryId: missing, metaData: { form: '{}' } }, 'id'))).toBe(422);
  });

  test("the name snapshot is the service's, whatever was sent", () => {
    const decided = rules.decideCreate(
      seller,
      body({ properties: [{ propertyId: BRAND, value: 'A', propertyNameSnapshot: 'Mine' }] }),
      'id',
    );
    expect(decided.properties).toEqual([{ propertyId: BRAND, value: 'A', propertyNameSnapshot: 'Brand' }]);
  });

  test.each<[Property['type'], string | number | boolean, boolean]>([
    ['text', 'x', true],
    ['text', '', false],
    ['number', 0, true],
    ['number', '1', false],
    ['boolean', false, true],
    ['boolean', 'yes', false],
    ['select', 'S', true],
    ['select', 's', false],
  ])('a %s property takes %p: %s', (type, value, fits) => {
    const property: Property = { id: 'p', name: 'P', type, ...(type === 'select' ? { options: ['S', 'M'] } : {}) };
    expect(propertyValueProblem(property, value) === null).toBe(fits);
  });
});

describe('a partial update: the merged prices are checked; a category change re-checks the properties', () => {
  const cases: Array<[string, Partial<Product>, Record<string, unknown>, number | 'ok']> = [
    ['compare above the stored selling price', {}, { comparePrice: 150 }, 'ok'],
    ['compare below the stored selling price', {}, { comparePrice: 50 }, 422],
    ['selling above the stored compare price', { comparePriceMinor: 120_00 }, { sellingPrice: 130 }, 422],
    ['selling under the stored compare price', { comparePriceMinor: 120_00 }, { sellingPrice: 110 }, 'ok'],
    ['a category whose properties the stored ones are not', {}, { categoryId: BOOKS }, 422],
    ['a category with fitting properties', {}, { categoryId: BOOKS, properties: [{ propertyId: AUTHOR, value: 'A' }] }, 'ok'],
  ];
  test.each(cases)('%s', (_name, stored, patch, expected) => {
    expect(outcome(() => rules.decideUpdate(product(stored), UpdateProductBody.parse(patch), patch))).toBe(expected);
  });

  test('only the fields sent are set; the description is sanitized', () => {
    const patch = { stock: 5, description: '<p>hi</p><script>x()</script>' };
    expect(rules.decideUpdate(product(), UpdateProductBody.parse(patch), patch)).toEqual({ stock: 5, descriptionHtml: '<p>hi</p>' });
  });
});

describe('drafts', () => {
  const draft = product({ isDraft: true, name: null, metaData: { form: '{}' }, visibility: 'Private' });

  test('the full fields publish a draft (checked like a create); fewer are refused', () => {
    const full = { name: 'Phone', description: 'd', sellingPrice: 10, stock: 1, shippingHandler: 'Seller', categoryId: ELECTRONICS };
    expect(rules.decideUpdate(draft, UpdateProductBody.parse(full), full)).toMatchObject({ isDraft: false, metaData: null, name: 'Phone' });
    expect(() => rules.decideUpdate(draft, UpdateProductBody.parse({ name: 'x' }), { name: 'x' })).toThrow();
  });

  test.each<[string, Product, Record<string, unknown>, number | 'ok']>([
    ['a draft', draft, { metaData: { form: '{"a":1}' } }, 'ok'],
    ['a draft, a new category', draft, { categoryId: BOOKS }, 'ok'],
    ['a draft, an unknown category', draft, { categoryId: 'MKT-CAT-NOTTHERE' }, 422],
    ['a published product', product(), { metaData: { form: '{}' } }, 409],
  ])('PATCH draft/{id} on %s', (_name, current, patch, expected) => {
    expect(outcome(() => rules.decideUpdateDraft(current, patch))).toBe(expected);
  });
});

describe('descriptions are sanitized HTML', () => {
  test.each([
    ['<p><b>bold</b></p>', '<p><b>bold</b></p>'],
    ['<script>alert(1)</script><p>x</p>', '<p>x</p>'],
    ['<p onclick="x()">x</p>', '<p>x</p>'],
    ['<a href="javascript:x()">l</a>', '<a rel="nofollow noopener noreferrer">l</a>'],
    ['<a href="https://e.test">l</a>', '<a href="https://e.test" rel="nofollow noopener noreferrer">l</a>'],
    ['<img src="http://e.test/i.png" />', '<img />'],
    ['<style>p{}</style>ok', 'ok'],
  ])('%s', (html, clean) => expect(sanitizeDescription(html)).toBe(clean));
});

describe('an admin’s change of a seller’s product carries its audit entry', () => {
  const context = { requestId: 'req-1', clientAddress: null };
  const now = new Date('2026-12-01T10:00:00.000Z');

  test('guarded by the updatedAt read, with the changed fields before and after', () => {
    const current = product({ name: 'Phone', stock: 3 });
    const write = productWrite(admin, current, { name: 'Phone X', stock: 3 }, 'product.edit', context, now);
    expect(write.expect).toEqual({ updatedAt: current.updatedAt });
    expect(write.set).toEqual({ name: 'Phone X', stock: 3 });
    expect(write.event).toMatchObject({
      type: 'catalog.admin_action.recorded',
      source: 'catalog',
      correlationId: 'req-1',
      data: {
        action: 'product.edit',
        actorId: admin.id,
        targetType: 'product',
        targetId: current._id,
        before: { name: 'Phone' },
        after: { name: 'Phone X' },
      },
    });
    expect(productWrite(admin, current, { visibility: 'Hidden' }, 'product.visibility', context, now).event?.data).toMatchObject({
      action: 'product.visibility',
      before: { visibility: current.visibility },
      after: { visibility: 'Hidden' },
    });
  });

  test('the seller’s own change is the plain update', () => {
    expect(productWrite(seller, product(), { stock: 1 }, 'product.edit', context, now)).toEqual({
      expect: {},
      set: { stock: 1 },
    });
  });
});

describe('an admin’s delete of a seller’s product records its audit entry', () => {
  const context = { requestId: 'req-2', clientAddress: '203.0.113.7' };
  const now = new Date('2026-12-01T10:00:00.000Z');

  test('guarded by the updatedAt read, with what the product was before and nothing after', () => {
    const current = product({ name: 'Phone', stock: 3 });
    const deletion = productDeletion(admin, current, context, now);
    expect(deletion.expect).toEqual({ updatedAt: current.updatedAt });
    expect(deletion.entry).toMatchObject({
      type: 'catalog.admin_action.recorded',
      source: 'catalog',
      correlationId: 'req-2',
      data: {
        action: 'product.delete',
        actorId: admin.id,
        actorRole: 'admin',
        targetType: 'product',
        targetId: current._id,
        at: now.toISOString(),
        requestId: 'req-2',
        clientAddress: '203.0.113.7',
        before: expect.objectContaining({ name: 'Phone', stock: 3, sellerId: seller.id }),
        after: null,
      },
    });
    expect((deletion.entry?.data as { before: object }).before).not.toHaveProperty('pendingEvents');
  });

  test('the seller’s own delete, and an admin’s of their own product, are plain: no guard, nothing recorded', () => {
    expect(productDeletion(seller, product(), context, now)).toEqual({ expect: {}, entry: null });
    expect(productDeletion(admin, product({ sellerId: admin.id }), context, now)).toEqual({ expect: {}, entry: null });
  });
});
