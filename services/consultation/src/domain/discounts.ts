import { newInternalId, newUnderscoreReference, type CreateDiscountBody } from '@mkt/contracts/consultation';
import type { AuthenticatedUser } from '@mkt/kit/http';
import { assertSeller } from './access';
import type { DiscountDoc } from './records';

/** Bookings that hold a use of a coupon (a cancelled or failed one gave its use back). */
export const USING_STATUSES = ['PaymentPending', 'Confirmed'] as const;

/** A seller's coupon: a Fixed value kept in minor units (the contract parsed it), a percentage as is. */
export function newDiscount(user: AuthenticatedUser, body: CreateDiscountBody): Omit<DiscountDoc, 'createdAt'> {
  assertSeller(user);
  return {
    _id: newInternalId('pd'),
    referenceId: newUnderscoreReference('PD'),
    sellerId: user.id,
    name: body.name,
    description: body.description,
    discountType: body.discountType,
    discountValue: body.discountType === 'Fixed' ? body.discountValueMinor : body.discountValue,
    validFrom: new Date(body.validFrom),
    validTo: new Date(body.validTo),
    couponCode: body.couponCode,
    maxUses: body.maxUses,
    maxUsesPerBuyer: body.maxUsesPerBuyer,
    isActive: body.isActive,
    uses: 0,
    usedBy: [],
    buyerUses: {},
  } as Omit<DiscountDoc, 'createdAt'>;
}
