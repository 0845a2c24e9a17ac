import { minorToMajor, newInternalId, newUnderscoreReference, type CreateDiscountBody } from '@mkt/contracts';
import { Conflict, isDuplicateKey, type AuthenticatedUser } from '@mkt/kit';
import { Booking } from '../db/booking.models';
import { Discount, Pricing, type DiscountDoc } from '../db/setup.models';
import { assertSeller, subjectOf, visibleConsultation, type Subject } from './access';
import { applyCoupon, countCouponCheck, couponProblem, UNUSABLE_COUPON } from './coupons';

/** A fixed discount is stored in minor units (the contract parsed it), a percentage as is. */
export async function createDiscount(user: AuthenticatedUser, body: CreateDiscountBody): Promise<DiscountDoc> {
  assertSeller(user);
  const value = body.discountType === 'Fixed' ? body.discountValueMinor : body.discountValue;
  try {
    const doc = await Discount.create({
      _id: newInternalId('pd'),
      referenceId: newUnderscoreReference('PD'),
      sellerId: user.id,
      name: body.name,
      description: body.description,
      discountType: body.discountType,
      discountValue: value,
      validFrom: new Date(body.validFrom),
      validTo: new Date(body.validTo),
      couponCode: body.couponCode,
      maxUses: body.maxUses,
      isActive: body.isActive,
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

/** Bookings that hold (or held, then cancelled: the use stays used) a use of a coupon. */
const USING_STATUSES = ['PaymentPending', 'Confirmed', 'Cancelled'];

/** Whether the user holds a use of the coupon through a booking of theirs. */
async function usedBy(subject: Subject, discount: DiscountDoc): Promise<boolean> {
  const buyer = subject.self ? { buyerId: subject.key } : { $or: [{ buyerId: subject.key }, { buyerRef: subject.key }] };
  return (await Booking.exists({ couponId: discount._id, status: { $in: USING_STATUSES }, ...buyer })) !== null;
}

/**
 * What a coupon would do to a consultation's price now (no use is taken), for the caller or the
 * user `userId` names (only themselves; an admin anyone — see `subjectOf`). Throttled per
 * caller; the consultation must be one the caller may know of; a coupon that cannot be used
 * shows nothing of itself (see `couponProblem`), not even whether the user used it.
 */
export async function validateCoupon(
  user: AuthenticatedUser,
  body: { couponCode: string; consultationId: string; userId?: string },
  now = new Date(),
) {
  // Checked before anything counts: a refused question changes nothing.
  const subject = subjectOf(user, body.userId);
  await countCouponCheck(user.id, now);
  const consultation = await visibleConsultation(user, body.consultationId);
  const pricing = await Pricing.findById(consultation.pricingId).lean();
  const price = pricing?.basePriceMinor ?? 0;
  const found = await sellerCoupon(consultation.sellerId, body.couponCode);
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
    usedByUser: discount ? await usedBy(subject, discount) : false,
  };
}
