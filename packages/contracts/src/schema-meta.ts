import { z } from 'zod';

/**
 * JSON Schema keywords for what a validator checks but zod's JSON Schema conversion cannot show
 * (a trim, a refinement, a transform). Set on the schema with `.meta()`, they are part of the
 * schema the OpenAPI document is generated from: the published contract says what is accepted
 * without reading zod's internals, and rewording an error message changes nothing in it.
 */

/** A trimmed string with a minimum length: it must hold a character other than white space. */
export const NON_BLANK = { pattern: '\\S' };

/** An object refined to have at least one field (a partial update). */
export const AT_LEAST_ONE_FIELD = { minProperties: 1 };

/**
 * A string normalised, then piped into `z.email()`: the pattern of the validator it is piped into.
 * An e-mail address is what that pattern says, not `format: email`, whose rule is each tool's own
 * (under which a tool would call valid addresses invalid).
 */
export const EMAIL_PIPE = { pattern: z.toJSONSchema(z.email()).pattern as string };

/** A `z.email()` answered: its pattern without `format: email` (see `EMAIL_PIPE`), by zod-openapi's `override`. */
export const EMAIL_BY_PATTERN = {
  override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
    delete jsonSchema.format;
  },
};

/** A string normalised, then piped into `z.uuid()`: what `z.uuid()` says of itself. */
export const UUID_PIPE = { format: 'uuid', pattern: z.toJSONSchema(z.uuid()).pattern as string };
