/**
 * The prefixes under `/consultations` behind a token as a whole (bookings, sessions, setup):
 * kit's `guardedPrefixes` of the app, in their one spelling (routing is case-sensitive and strict).
 */
export const PRIVATE_PREFIXES = ['/bookings', '/sessions', '/availability-rule-sets', '/pricing', '/visibility'] as const;

/**
 * Whether a path under `/consultations` is one of the private prefixes in any spelling a router
 * could be lenient about (case, repeated slashes). The table's routing is strict, so another
 * spelling reaches no handler at all; this says which spellings the guard must never let a
 * handler answer without a token (the routing test checks both).
 */
export function isFixedPath(path: string): boolean {
  const normalized = path.toLowerCase().replace(/\/{2,}/g, '/');
  return PRIVATE_PREFIXES.some((prefix) => normalized === prefix || normalized.startsWith(`${prefix}/`));
}
