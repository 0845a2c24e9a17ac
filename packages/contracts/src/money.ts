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

const decimalRe = /^(-)?(\d+)(?:\.(\d{1,2}))?$/;

/** "12.5" → 1250, "-0.01" → -1; null for anything with more than 2 decimals or out of range. */
export function decimalStringToMinor(value: string): number | null {
  const match = decimalRe.exec(value.trim());
  if (!match) return null;
  const [, sign, whole, fraction = ''] = match;
  const minor = Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
  if (!Number.isSafeInteger(minor) || !Number.isSafeInteger(Number(whole) * 100)) return null;
  return sign && minor !== 0 ? -minor : minor;
}

/**
 * A major-unit number from JSON → minor units; null when it has more than 2 decimals or is not
 * finite. 0.1 + 0.2 is accepted as 30: binary noise below a thousandth of a minor unit is
 * rounding, a real third decimal (1.005) is refused.
 */
export function majorToMinor(value: number): number | null {
  if (!Number.isFinite(value)) return null;
  const scaled = value * 100;
  const minor = Math.round(scaled);
  if (!Number.isSafeInteger(minor)) return null;
  // Tolerance: what the float product can be off by, never as much as a real third decimal.
  const tolerance = Math.max(1e-6, Math.abs(scaled) * Number.EPSILON * 4);
  if (Math.abs(scaled - minor) > tolerance) return null;
  return minor === 0 ? 0 : minor;
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

/** A positive major-unit number with at most 2 decimals, parsed to minor units. */
export const PositiveMajorAmount = z
  .number()
  .positive('The amount must be greater than zero')
  .transform((value, ctx) => {
    const minor = majorToMinor(value);
    if (minor === null || minor <= 0) {
      ctx.addIssue({ code: 'custom', message: 'The amount must have at most 2 decimals' });
      return z.NEVER;
    }
    return minor;
  });

/** A positive decimal string with at most 2 decimals ("150.00"), parsed to minor units. */
export const PositiveDecimalString = z
  .string()
  .trim()
  .transform((value, ctx) => {
    const minor = decimalStringToMinor(value);
    if (minor === null || !/^\d+(\.\d{1,2})?$/.test(value)) {
      ctx.addIssue({ code: 'custom', message: 'Expected a decimal string with at most 2 decimals, such as "150.00"' });
      return z.NEVER;
    }
    if (minor <= 0) {
      ctx.addIssue({ code: 'custom', message: 'The amount must be greater than zero' });
      return z.NEVER;
    }
    return minor;
  });

/** A positive integer of minor units (the /v1 group's `amount` and `price`). */
export const PositiveMinorAmount = z.number().int('Minor units are whole numbers').positive().max(MAX_MINOR);
