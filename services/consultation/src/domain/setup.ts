/**
 * What a seller sets up before selling consultations, one module per concern: availability rule
 * sets, pricing, promotional discounts (coupons) and visibility rule sets. Gathered here for
 * callers that reach into the setup as a whole.
 */
export * from './rule-sets';
export * from './pricing';
export * from './discounts';
export * from './visibility-rule-sets';
