import { z } from 'zod';
import { ShippingHandler, Visibility } from '../catalog';
import { Count, CurrencyCode, Major, PrefixedRef, Text, Timestamp, UserId, Uuid } from './common';

const VisibilityValue = Visibility;
const ProductRef = PrefixedRef('SELL-PROD');

/** A category and the properties its products may carry. */
export const CategoryResponse = z
  .strictObject({
    id: PrefixedRef('CAT'),
    name: Text('Grocery'),
    properties: z.array(
      z.strictObject({
        id: PrefixedRef('PRO'),
        name: Text('Organic'),
        type: z.enum(['text', 'number', 'boolean', 'select']).meta({ id: 'PropertyType' }),
        /** The allowed values of a `select` property. */
        options: z.array(Text('1 kg')).optional(),
        unit: Text('kg').optional(),
      }),
    ),
  })
  .meta({ id: 'Category' });
export const CategoriesResponse = z.array(CategoryResponse).meta({ id: 'Categories' });

export const ProductCreatedResponse = z
  .strictObject({
    id: ProductRef,
    name: Text('Yirgacheffe coffee 1 kg'),
    sellingPrice: Major(899.5),
    stock: Count(40),
    createdAt: Timestamp,
  })
  .meta({ id: 'ProductCreated' });

/** A row of the public listing. */
export const ProductListItemResponse = z
  .strictObject({
    id: ProductRef,
    name: Text('Yirgacheffe coffee 1 kg'),
    sellingPrice: Major(899.5),
    comparePrice: Major(950).nullable(),
    discountPercentage: z.number().min(0).max(100),
    stock: Count(40),
    visibility: VisibilityValue,
    categoryId: PrefixedRef('CAT'),
    createdAt: Timestamp,
  })
  .meta({ id: 'ProductListItem' });
export const ProductListResponse = z.array(ProductListItemResponse).meta({ id: 'ProductList' });

const PropertyValueResponse = z.union([z.string(), z.number(), z.boolean()]).meta({ id: 'PropertyValue' });

export const ProductResponse = z
  .strictObject({
    id: ProductRef,
    isDraft: z.literal(false),
    name: Text('Yirgacheffe coffee 1 kg'),
    description: Text('<p>Washed, single origin</p>'),
    sellingPrice: Major(899.5),
    comparePrice: Major(950).nullable(),
    stock: Count(40),
    discountCode: Text('LAUNCH10').nullable(),
    discountPercentage: z.number().min(0).max(100),
    shippingHandler: ShippingHandler,
    deliveryCost: Major(50),
    categoryId: PrefixedRef('CAT'),
    properties: z.array(
      z.strictObject({ propertyId: PrefixedRef('PRO'), value: PropertyValueResponse, propertyNameSnapshot: Text('Organic') }),
    ),
    visibility: VisibilityValue,
    sellerId: UserId,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'Product' });

export const DraftResponse = z
  .strictObject({
    id: ProductRef,
    isDraft: z.literal(true),
    categoryId: PrefixedRef('CAT'),
    metaData: z.strictObject({ form: Text('{"name":"Yirgacheffe coffee"}') }),
    visibility: VisibilityValue,
    sellerId: UserId,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'Draft' });

/** A product or a draft (its owner sees both), told apart by `isDraft`. */
/**
 * A product or a draft, told apart by `isDraft`. Published without an OpenAPI `discriminator`
 * (zod-openapi adds one to a union of components): its mapping keys are strings, which the
 * boolean `isDraft` of a generated client never equals.
 */
export const ProductOrDraftResponse = z.discriminatedUnion('isDraft', [ProductResponse, DraftResponse]).meta({
  id: 'ProductOrDraft',
  override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
    delete jsonSchema.discriminator;
  },
});
export const MyProductsResponse = z.array(ProductOrDraftResponse).meta({ id: 'MyProducts' });

export const ShopResponse = z
  .strictObject({
    id: Uuid,
    name: Text('Abebe Coffee'),
    slug: Text('abebe-coffee'),
    country: Text('ET'),
    category: Text('Coffee'),
    ownerId: UserId,
    createdAt: Timestamp,
  })
  .meta({ id: 'Shop' });

/** `/v1` products: `price` in integer minor units. */
export const V1ProductResponse = z
  .strictObject({
    id: Uuid,
    title: Text('Green beans 5 kg'),
    price: Count(250000),
    currency: CurrencyCode,
    sku: Text('BEANS-5KG'),
    inventory: Count(12),
    ownerId: UserId,
    createdAt: Timestamp,
  })
  .meta({ id: 'V1Product' });
export const V1ProductListResponse = z.array(V1ProductResponse).meta({ id: 'V1ProductList' });
