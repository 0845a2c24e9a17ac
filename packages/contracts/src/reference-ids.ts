// The references' kinds, formats and generators, without a schema (no zod): what the test harness
// and anything that must not load the schemas use (`@mkt/contracts/references`).
import { randomInt, randomUUID } from 'node:crypto';

/** Kinds written `<PREFIX>-<KIND>-<SUFFIX>`, e.g. MKT-TOP-UP-7Q2M9XKD. */
export const PREFIXED_KINDS = ['USR', 'USR-WAL', 'TOP-UP', 'PAY-REQ', 'SELL-PROD', 'CAT', 'PRO', 'CON', 'AVL-RST'] as const;
export type PrefixedKind = (typeof PREFIXED_KINDS)[number];

/** Kinds written `<KIND>_<SUFFIX>`, e.g. BK_4H8K2M1Q. */
export const UNDERSCORE_KINDS = ['CUS', 'SES', 'BK', 'REV', 'PR', 'PD', 'VRS', 'ARS'] as const;
export type UnderscoreKind = (typeof UNDERSCORE_KINDS)[number];

/** Kinds of internal ids written `<kind>_<suffix>` in lower case, e.g. ses_k2j4h6g8f0d2s4a6. */
export const INTERNAL_ID_KINDS = ['cus', 'ses', 'con', 'bk', 'rev', 'pr', 'pd', 'vrs', 'ars'] as const;
export type InternalIdKind = (typeof INTERNAL_ID_KINDS)[number];

export const DEFAULT_REFERENCE_PREFIX = 'MKT';
export const REFERENCE_SUFFIX_LENGTH = 8;
const INTERNAL_SUFFIX_LENGTH = 16;
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const LOWER = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomSuffix(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[randomInt(alphabet.length)];
  return out;
}

// Longer kinds first so that USR-WAL is never read as USR.
const prefixedKindPattern = [...PREFIXED_KINDS].sort((a, b) => b.length - a.length).join('|');
const prefixedRe = new RegExp(`^([A-Z][A-Z0-9]{1,9})-(${prefixedKindPattern})-([A-Z0-9]{${REFERENCE_SUFFIX_LENGTH}})$`);
const underscoreRe = new RegExp(`^(${UNDERSCORE_KINDS.join('|')})_([A-Z0-9]{${REFERENCE_SUFFIX_LENGTH}})$`);

export function newReference(kind: PrefixedKind, prefix: string = DEFAULT_REFERENCE_PREFIX): string {
  return `${prefix}-${kind}-${randomSuffix(UPPER, REFERENCE_SUFFIX_LENGTH)}`;
}

export function newUnderscoreReference(kind: UnderscoreKind): string {
  return `${kind}_${randomSuffix(UPPER, REFERENCE_SUFFIX_LENGTH)}`;
}

export function newInternalId(kind: InternalIdKind): string {
  return `${kind}_${randomSuffix(LOWER, INTERNAL_SUFFIX_LENGTH)}`;
}

export function newUuid(): string {
  return randomUUID();
}

export interface ParsedReference {
  prefix: string | null;
  kind: PrefixedKind | UnderscoreKind;
  suffix: string;
}

/** Reads a reference of any kind; null when the string is not one. */
export function parseReference(value: string): ParsedReference | null {
  const prefixed = prefixedRe.exec(value);
  if (prefixed) return { prefix: prefixed[1]!, kind: prefixed[2] as PrefixedKind, suffix: prefixed[3]! };
  const underscored = underscoreRe.exec(value);
  if (underscored) return { prefix: null, kind: underscored[1] as UnderscoreKind, suffix: underscored[2]! };
  return null;
}

export function isReferenceOf(value: string, kind: PrefixedKind | UnderscoreKind): boolean {
  return parseReference(value)?.kind === kind;
}

/** The pattern of one kind's references (any prefix): what `referenceOf` checks, and documents. */
export function referencePattern(kind: PrefixedKind | UnderscoreKind): RegExp {
  const suffix = `[A-Z0-9]{${REFERENCE_SUFFIX_LENGTH}}`;
  return (PREFIXED_KINDS as readonly string[]).includes(kind)
    ? new RegExp(`^[A-Z][A-Z0-9]{1,9}-${kind}-${suffix}$`)
    : new RegExp(`^${kind}_${suffix}$`);
}
