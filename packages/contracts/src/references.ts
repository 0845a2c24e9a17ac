import { z } from 'zod';
import { referencePattern, type PrefixedKind, type UnderscoreKind } from './reference-ids';

export * from './reference-ids';

export const ReferencePrefix = z.string().regex(/^[A-Z][A-Z0-9]{1,9}$/, 'A prefix is 2 to 10 upper-case letters or digits');

/** A zod schema accepting only references of one kind (any prefix); its pattern is in the OpenAPI document. */
export function referenceOf(kind: PrefixedKind | UnderscoreKind) {
  return z.string().regex(referencePattern(kind), `Expected a ${kind} reference`);
}

export const Uuid = z.string().uuid();
