import { z } from 'zod';
import type { PrefixedKind, UnderscoreKind } from '../references';

/**
 * Building blocks of the response schemas: strict (a field the schema does not name fails the
 * parse), each with an example the OpenAPI document's response examples are composed from.
 */

export const Timestamp = z.iso.datetime().meta({ examples: ['2026-11-23T09:00:00.000Z'] });
export const NullableTimestamp = Timestamp.nullable();
/** A calendar day: `format: date` as the booking request's `date` (one format, a date type in generated clients). */
export const Day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .meta({ format: 'date', examples: ['2026-11-26'] });
export const ClockTime = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/)
  .meta({ examples: ['09:00'] });
export const Uuid = z.uuid().meta({ examples: ['3f1c2a7e-8d4b-4c1e-9a2f-5b6c7d8e9f01'] });
export const Text = (example: string) => z.string().meta({ examples: [example] });
/** Major units (ETB), at most 2 decimals. */
export const Major = (example = 750) => z.number().meta({ examples: [example] });
export const Count = (example = 1) =>
  z
    .number()
    .int()
    .min(0)
    .meta({ examples: [example] });
/** An average of 1–5 ratings, 2 decimals; 0 when there are none. */
export const AverageRating = z
  .number()
  .min(0)
  .max(5)
  .meta({ examples: [4.5] });
export const CurrencyCode = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .meta({ examples: ['ETB'] });

const EXAMPLE_SUFFIX = '7Q2M9XKD';

/** `<PREFIX>-<KIND>-<8>` (any configured prefix). */
export function PrefixedRef(kind: PrefixedKind) {
  return z
    .string()
    .regex(new RegExp(`^[A-Z][A-Z0-9]{1,9}-${kind}-[A-Z0-9]{8}$`))
    .meta({ examples: [`MKT-${kind}-${EXAMPLE_SUFFIX}`] });
}

/** `<KIND>_<8>`. */
export function UnderscoreRef(kind: UnderscoreKind) {
  return z
    .string()
    .regex(new RegExp(`^${kind}_[A-Z0-9]{8}$`))
    .meta({ examples: [`${kind}_${EXAMPLE_SUFFIX}`] });
}

/** Internal id `<kind>_<16 lower-case letters or digits>`. */
export function InternalId(kind: 'cus' | 'ses' | 'con' | 'bk' | 'rev' | 'pr' | 'pd' | 'vrs') {
  return z
    .string()
    .regex(new RegExp(`^${kind}_[a-z0-9]{16}$`))
    .meta({ examples: [`${kind}_k2j4h6g8f0d2s4a6`] });
}

/** A user's role. */
export const UserRole = z.enum(['buyer', 'seller', 'admin']).meta({ id: 'UserRole' });

/** A user id: the gateway's uuid. */
export const UserId = Uuid;

export const PaginationResponse = z
  .strictObject({
    page: z.number().int().min(1),
    limit: z.number().int().min(1),
    total: z.number().int().min(0),
  })
  .meta({ id: 'Pagination' });
