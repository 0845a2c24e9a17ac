import { newInternalId, newUnderscoreReference, type CreatePricingBody } from '@mkt/contracts';
import type { AuthenticatedUser } from '@mkt/kit';
import { Pricing } from '../db/setup.models';
import { assertSeller } from './access';

/** A seller's price for consultations, stored in minor units as the contract parsed it. */
export async function createPricing(user: AuthenticatedUser, body: CreatePricingBody) {
  assertSeller(user);
  const doc = await Pricing.create({
    _id: newInternalId('pr'),
    referenceId: newUnderscoreReference('PR'),
    sellerId: user.id,
    basePriceMinor: body.basePriceMinor,
    currency: body.currency,
    pricingStrategy: body.pricingStrategy,
    comparePriceMinor: body.comparePriceMinor ?? null,
    isOnSale: body.isOnSale,
    isActive: body.isActive,
  });
  return doc.toObject();
}
