import { z } from 'zod';
import { AT_LEAST_ONE_FIELD, NON_BLANK } from './schema-meta';
import { Currency, NonNegativeMajorAmount, NonNegativeMoneyParam, withMinorNames } from './money';
import { COUNTRY_CODE_LIST } from './countries';
import { PageQuery } from './pagination';
import { referenceOf } from './references';
import { breakRule, RULE } from './rules';

export const VISIBILITIES = ['Public', 'Hidden', 'Private'] as const;
export const Visibility = z.enum(VISIBILITIES).meta({ id: 'ProductVisibility' });
export type Visibility = z.infer<typeof Visibility>;

export const ShippingHandler = z.enum(['Seller', 'Platform']).meta({ id: 'ShippingHandler' });

/**
 * Documented as one schema with a list of types (`maxLength` applies to the string), as zod writes
 * the answer's: an `anyOf` of the three reads as an empty model in typescript-fetch, and a `oneOf`
 * draws a warning from openapi-generator.
 */
export const PropertyValue = z.union([z.string().trim().max(200), z.number().finite(), z.boolean()]).meta({
  id: 'PropertyValueInput',
  override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
    delete jsonSchema.anyOf;
    Object.assign(jsonSchema, { type: ['string', 'number', 'boolean'], maxLength: 200 });
  },
});

export const ProductPropertyInput = z
  .object({
    propertyId: referenceOf('PRO'),
    value: PropertyValue,
    /**
     * Accepted and ignored: the service fills the name from the category. A GET returns it, so
     * a client may send back the properties it read.
     */
    propertyNameSnapshot: z.string().max(200).optional(),
  })
  .strict();

const productFields = {
  name: z.string().trim().min(1).max(200).meta(NON_BLANK),
  description: z.string().max(20_000),
  sellingPrice: NonNegativeMajorAmount,
  comparePrice: NonNegativeMajorAmount.optional(),
  stock: z.number().int('Stock is a whole number').min(0).max(1_000_000_000),
  discountCode: z.string().trim().max(50).optional(),
  discountPercentage: z.number().min(0).max(100).optional(),
  shippingHandler: ShippingHandler,
  deliveryCost: NonNegativeMajorAmount.optional(),
  categoryId: referenceOf('CAT'),
  properties: z.array(ProductPropertyInput).max(50).optional(),
  visibility: Visibility.optional(),
};

function comparePriceAtLeastSelling(value: { sellingPrice?: number; comparePrice?: number }, ctx: z.RefinementCtx): void {
  if (value.comparePrice !== undefined && value.sellingPrice !== undefined && value.comparePrice < value.sellingPrice) {
    breakRule(ctx, ['comparePrice'], 'comparePrice must be at least sellingPrice');
  }
}

/** The amounts of a product body, parsed from major units and renamed `*Minor`. */
const productAmounts = withMinorNames(['sellingPrice', 'comparePrice', 'deliveryCost']);

/** A full product: create, and the PATCH that publishes a draft. Amounts arrive in major units. */
export const CreateProductBody = z
  .object(productFields)
  .strict()
  .superRefine(comparePriceAtLeastSelling)
  .transform(productAmounts)
  .meta({ id: 'CreateProductBody' });
export type CreateProductBody = z.infer<typeof CreateProductBody>;

/** A partial update of a product (the merged result is checked again by the service). */
export const UpdateProductBody = z
  .object(productFields)
  .partial()
  .strict()
  .superRefine(comparePriceAtLeastSelling)
  .refine((value) => Object.keys(value).length > 0, 'Send at least one field')
  .meta(AT_LEAST_ONE_FIELD)
  .transform(productAmounts)
  .meta({ id: 'UpdateProductBody' });
export type UpdateProductBody = z.infer<typeof UpdateProductBody>;

export const VisibilityBody = z.object({ visibility: Visibility }).strict().meta({ id: 'VisibilityBody' });

const DraftForm = z
  .string()
  .max(100_000)
  .refine(
    (value) => {
      try {
        JSON.parse(value);
        return true;
      } catch {
        return false;
      }
    },
    { message: 'metaData.form must hold serialized JSON', params: RULE },
  );

export const DraftBody = z
  .object({
    categoryId: referenceOf('CAT'),
    metaData: z.object({ form: DraftForm }).strict(),
  })
  .strict()
  .meta({ id: 'DraftBody' });
export type DraftBody = z.infer<typeof DraftBody>;
export const UpdateDraftBody = DraftBody.partial()
  .strict()
  .refine((value) => Object.keys(value).length > 0, 'Send at least one field')
  .meta({ ...AT_LEAST_ONE_FIELD, id: 'UpdateDraftBody' });
export type UpdateDraftBody = z.infer<typeof UpdateDraftBody>;

export const ProductRefParams = z.object({ referenceId: referenceOf('SELL-PROD') }).strict();

export const ProductListQuery = PageQuery.extend({
  /** Search text: no control characters (a NUL cannot even be sent to the database in a pattern). */
  q: z
    .string()
    .trim()
    .max(100)
    // Matching control characters is the point here.
    // eslint-disable-next-line no-control-regex
    .regex(/^[^\u0000-\u001f\u007f]*[^\s\u0000-\u001f\u007f][^\u0000-\u001f\u007f]*$/, 'Search text without control characters')
    .optional(),
  categoryId: referenceOf('CAT').optional(),
  /** Parsed to minor units as `minPriceMinor` and `maxPriceMinor`. */
  minPrice: NonNegativeMoneyParam.optional(),
  maxPrice: NonNegativeMoneyParam.optional(),
  sort: z.enum(['newest', 'price_asc', 'price_desc']).meta({ id: 'ProductSort' }).default('newest'),
})
  .strict()
  .transform(withMinorNames(['minPrice', 'maxPrice']));
export type ProductListQuery = z.infer<typeof ProductListQuery>;

export const MyProductsQuery = PageQuery.strict();

export const CreateShopBody = z
  .object({
    name: z.string().trim().min(1).max(120).meta(NON_BLANK),
    slug: z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'A slug is lower-case letters and digits joined by single dashes')
      .max(60),
    country: z.enum(COUNTRY_CODE_LIST, { error: 'Expected an ISO 3166-1 alpha-2 country code such as ET' }).meta({ id: 'CountryCode' }),
    category: z.string().trim().min(1).max(60).meta(NON_BLANK),
  })
  .strict()
  .meta({ id: 'CreateShopBody' });
export type CreateShopBody = z.infer<typeof CreateShopBody>;
export const ShopParams = z.object({ shopId: z.string().uuid() }).strict();

export const CreateV1ProductBody = z
  .object({
    title: z.string().trim().min(1).max(200).meta(NON_BLANK),
    price: z.number().int('Minor units are whole numbers').min(0).max(Number.MAX_SAFE_INTEGER),
    currency: Currency,
    sku: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9._-]+$/, 'A SKU is letters, digits, dots, dashes and underscores'),
    inventory: z.number().int().min(0).max(1_000_000_000),
  })
  .strict()
  .meta({ id: 'CreateV1ProductBody' });
export type CreateV1ProductBody = z.infer<typeof CreateV1ProductBody>;
export const V1ProductParams = z.object({ productId: z.string().uuid() }).strict();
export const V1ProductListQuery = PageQuery.strict();
