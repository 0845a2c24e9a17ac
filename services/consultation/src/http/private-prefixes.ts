/**
 * The prefixes under `/consultations` behind a token as a whole (bookings, sessions, setup):
 * kit's `guardedPrefixes` of the app, in their one spelling (routing is case-sensitive and strict).
 */
export const PRIVATE_PREFIXES = ['/bookings', '/sessions', '/availability-rule-sets', '/pricing', '/visibility'] as const;
