import { newInternalId, newUnderscoreReference, type CreatePricingBody } from '@mkt/contracts/consultation';
import type { AuthenticatedUser } from '@mkt/kit/http';
import { assertSeller } from './access';
import type { PricingDoc } from './records';

/** A seller's price for consultations, in minor units as the contract parsed it. */
export function newPricing(user: AuthenticatedUser, body: CreatePricingBody): Omit<PricingDoc, 'createdAt'> {
  assertSeller(user);
  return {
    _id: newInternalId('pr'),
    referenceId: newUnderscoreReference('PR'),
    sellerId: user.id,
    basePriceMinor: body.basePriceMinor,
    currency: body.currency,
    pricingStrategy: body.pricingStrategy,
    comparePriceMinor: body.comparePriceMinor ?? null,
    isOnSale: body.isOnSale,
    isActive: body.isActive,
  };
}
