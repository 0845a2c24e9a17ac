import { minorToMajor, newInternalId, newUnderscoreReference, parseMoney, type CreateDiscountBody } from '@mkt/contracts';
import { BadRequest, Conflict, isDuplicateKey, type AuthenticatedUser } from '@mkt/kit';
import { Discount, Pricing, type DiscountDoc } from '../db/setup.models';
import { assertSeller, visibleConsultation } from './access';
import { applyCoupon, countCouponCheck, couponProblem, UNUSABLE_COUPON } from './coupons';

/** A fixed discount is kept in minor units (through the one money parser), a percentage as is. */
function storedDiscountValue(body: CreateDiscountBody): number {
  if (body.discountType !== 'Fixed') return body.discountValue;
  const minor = parseMoney(body.discountValue);
  if (minor === null) throw new BadRequest('A fixed discount is an amount with at most 2 decimals', 'discountValue');
  return minor;
}

export async function createDiscount(user: AuthenticatedUser, body: CreateDiscountBody): Promise<DiscountDoc> {
  assertSeller(user);
  const value = storedDiscountValue(body);
  try {
    const doc = await Discount.create({
      _id: newInternalId('pd'),
      referenceId: newUnderscoreReference('PD'),
      sellerId: user.id,
      ...body,
      discountValue: value,
      validFrom: new Date(body.validFrom),
      validTo: new Date(body.validTo),
      uses: 0,
      usedBy: [],
    });
    return doc.toObject();
  } catch (err) {
    if (isDuplicateKey(err)) throw new Conflict('You have a coupon with this code already');
    throw err;
  }
}

export async function sellerCoupon(sellerId: string, code: string): Promise<DiscountDoc | null> {
  return Discount.findOne({ sellerId, couponCode: code.toUpperCase() }).lean<DiscountDoc>();
}

/**
 * What a coupon would do to a consultation's price now (no use is taken). Throttled per user;
 * the consultation must be one the caller may know of; a coupon that cannot be used shows
 * nothing of itself (see `couponProblem`).
 */
export async function validateCoupon(user: AuthenticatedUser, code: string, consultationKey: string, now = new Date()) {
  await countCouponCheck(user.id, now);
  const consultation = await visibleConsultation(user, consultationKey);
  const pricing = await Pricing.findById(consultation.pricingId).lean();
  const price = pricing?.basePriceMinor ?? 0;
  const found = await sellerCoupon(consultation.sellerId, code);
  const problem = couponProblem(found, price, now);
  const discount = problem === UNUSABLE_COUPON ? null : found;
  const quote = applyCoupon(price, problem ? null : discount);
  return {
    valid: problem === null,
    ...(problem ? { reason: problem } : {}),
    discountType: discount?.discountType ?? null,
    discountValue: discount ? (discount.discountType === 'Fixed' ? minorToMajor(discount.discountValue) : discount.discountValue) : null,
    finalPrice: minorToMajor(quote.finalMinor),
    originalPrice: minorToMajor(quote.originalMinor),
    savings: minorToMajor(quote.savingsMinor),
    currency: pricing?.currency ?? null,
  };
}
