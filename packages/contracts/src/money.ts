import { z } from 'zod';

/**
 * Money lives as integer minor units (santim, cents). These helpers are the only bridge to the
 * major-unit numbers and 2-decimal strings the API shows; a balance never sees a float.
 */

export const DEFAULT_CURRENCY = 'ETB';
export const Currency = z
  .string()
  .trim()
  .toUpperCase()
  .regex(/^[A-Z]{3}$/, 'A currency is a three-letter ISO 4217 code');

/** Largest amount in minor units that stays exact as a JS number. */
export const MAX_MINOR = Number.MAX_SAFE_INTEGER;

/** Plain decimal notation, at most 2 decimals: no exponent, no `+`, no spaces inside, no bare `.5`. */
const decimalRe = /^(-)?(\d+)(?:\.(\d{1,2}))?$/;

/** Major-unit JSON numbers below this keep their cents exactly (≤ 15 significant digits). */
export const MAX_EXACT_MAJOR_NUMBER = 1e13;

/**
 * The one money parser: a decimal string ("12.50", "-0.01") or a JSON number (12.5) → integer
 * minor units; null for anything else. A number is read in its shortest exact decimal form
 * (`String(1.1)` is "1.1"), so the rules are the same for both: at most 2 decimals (an exact
 * multiple of 0.01), no exponent form (`2.6e-42` and `1e+21` are refused, not rounded to 0 or
 * taken as huge), finite, and within the exact-integer range once in minor units. Computed floats
 * such as `0.1 + 0.2` (0.30000000000000004) are refused: money never arrives as arithmetic.
 * Numbers of 10^13 or more are refused (a double cannot hold their cents); strings go further.
 */
export function parseMoney(value: string | number): number | null {
  let text: string;
  if (typeof value === 'number') {
    // Beyond 15 significant digits a double no longer holds the cents the client wrote.
    if (!Number.isFinite(value) || Math.abs(value) >= MAX_EXACT_MAJOR_NUMBER) return null;
    text = String(value);
  } else if (typeof value === 'string') {
    text = value.trim();
  } else {
    return null;
  }
  const match = decimalRe.exec(text);
  if (!match) return null;
  const [, sign, whole, fraction = ''] = match;
  const wholeMinor = Number(whole) * 100;
  if (!Number.isSafeInteger(wholeMinor)) return null;
  const minor = wholeMinor + Number(fraction.padEnd(2, '0'));
  if (!Number.isSafeInteger(minor)) return null;
  return sign && minor !== 0 ? -minor : minor;
}

/** `parseMoney` for a decimal string (kept for callers that only ever hold strings). */
export function decimalStringToMinor(value: string): number | null {
  return parseMoney(value);
}

/** `parseMoney` for a major-unit JSON number (kept for callers that only ever hold numbers). */
export function majorToMinor(value: number): number | null {
  return parseMoney(value);
}

/** 1250 → 12.5 (for display in JSON only). */
export function minorToMajor(minor: number): number {
  assertMinor(minor);
  return Number(formatMinor(minor));
}

/** 1250 → "12.50", -1 → "-0.01". Integer arithmetic only. */
export function formatMinor(minor: number): string {
  assertMinor(minor);
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  const whole = Math.floor(abs / 100);
  const cents = abs - whole * 100;
  return `${sign}${whole}.${String(cents).padStart(2, '0')}`;
}

function assertMinor(minor: number): void {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`Not an integer amount of minor units: ${minor}`);
}

/** A major-unit JSON number parsed by `parseMoney` to minor units, at least `min` of them. */
function majorAmount(min: number, tooSmall: string) {
  return z.number().transform((value, ctx) => {
    const minor = parseMoney(value);
    if (minor === null) {
      ctx.addIssue({ code: 'custom', message: 'The amount must be a plain number with at most 2 decimals' });
      return z.NEVER;
    }
    if (minor < min) {
      ctx.addIssue({ code: 'custom', message: tooSmall });
      return z.NEVER;
    }
    return minor;
  });
}

/** A positive major-unit number with at most 2 decimals, parsed to minor units. */
export const PositiveMajorAmount = majorAmount(1, 'The amount must be greater than zero').meta({
  multipleOf: 0.01,
  exclusiveMinimum: 0,
  exclusiveMaximum: MAX_EXACT_MAJOR_NUMBER,
});

/** A non-negative major-unit number with at most 2 decimals, parsed to minor units. */
export const NonNegativeMajorAmount = majorAmount(0, 'The amount cannot be negative').meta({
  multipleOf: 0.01,
  minimum: 0,
  exclusiveMaximum: MAX_EXACT_MAJOR_NUMBER,
});

/** A positive decimal string of at most 2 decimals that fits a safe integer of minor units (what `parseMoney` accepts above 0). */
const POSITIVE_DECIMAL = '^([1-9][0-9]{0,12}(\\.[0-9]{1,2})?|0\\.(0[1-9]|[1-9][0-9]?))$';

/** A positive decimal string with at most 2 decimals ("150.00"), parsed to minor units. */
export const PositiveDecimalString = z
  .string()
  .transform((value, ctx) => {
    const minor = /^\d/.test(value) ? parseMoney(value) : null;
    if (minor === null) {
      ctx.addIssue({ code: 'custom', message: 'Expected a decimal string with at most 2 decimals, such as "150.00"' });
      return z.NEVER;
    }
    if (minor <= 0) {
      ctx.addIssue({ code: 'custom', message: 'The amount must be greater than zero' });
      return z.NEVER;
    }
    return minor;
  })
  .meta({ pattern: POSITIVE_DECIMAL });

/** A non-negative amount in a query string ("10", "9.99"), parsed by `parseMoney` to minor units. */
export const NonNegativeMoneyParam = z
  .string()
  .regex(/^[0-9]{1,13}(\.[0-9]{1,2})?$/, 'Expected a non-negative amount with at most 2 decimals, such as "9.99"')
  .transform((value) => parseMoney(value)!);

/** A positive integer of minor units (the /v1 group's `amount` and `price`). */
export const PositiveMinorAmount = z.number().int('Minor units are whole numbers').positive().max(MAX_MINOR);

/** `T` with each key of `K` renamed to `<key>Minor`, keeping its type (and optionality). */
export type WithMinorNames<T, K extends keyof T & string> = {
  [P in keyof T as P extends K ? `${P}Minor` : P]: T[P];
};

/**
 * A body transform that renames the amounts a schema has just parsed to minor units, so the
 * parsed value says what it holds: `{ basePrice: 75000 }` (from "750.00") becomes
 * `{ basePriceMinor: 75000 }`. The client still sends and sees `basePrice`; only the code reads
 * `*Minor`. Use after `.strict()` and any refinements: `.transform(withMinorNames(['basePrice']))`.
 */
export function withMinorNames<const K extends string>(keys: readonly K[]) {
  return <T extends { [P in K]?: unknown }>(body: T): WithMinorNames<T, K & keyof T> => {
    const renamed: Record<string, unknown> = { ...body };
    for (const key of keys) {
      if (!(key in renamed)) continue;
      renamed[`${key}Minor`] = renamed[key];
      delete renamed[key];
    }
    return renamed as WithMinorNames<T, K & keyof T>;
  };
}
