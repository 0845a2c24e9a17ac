import { randomUUID } from 'node:crypto';
import {
  parseMoney,
  minorToMajor,
  newInternalId,
  newReference,
  newUnderscoreReference,
  type CreateDiscountBody,
  type CreatePricingBody,
  type CreateRuleSetBody,
  type CreateVisibilityRuleSetBody,
  type PageQuery,
  type VisibilityStatusBody,
} from '@mkt/contracts';
import { BadRequest, Conflict, isDuplicateKey, type AuthenticatedUser, findPage } from '@mkt/kit';
import { Booking } from '../db/booking.models';
import {
  Consultation,
  Discount,
  Pricing,
  RuleSet,
  VisibilityRuleSet,
  type ConsultationDoc,
  type DiscountDoc,
  type RuleSetDoc,
} from '../db/setup.models';
import { assertOwner, assertSeller, isAdmin, isListed, mustFind, visibleConsultation } from './access';
import { applyCoupon, countCouponCheck, couponProblem, UNUSABLE_COUPON } from './coupons';
import { isValidZone, slotsBetween } from './slots';
import { decideVisibility, ruleSetInForce } from './visibility';

const UTILIZATION_DAYS = 28;

export function assertZone(zone: string, path: string): void {
  if (!isValidZone(zone)) throw new BadRequest('Not an IANA time zone such as Africa/Addis_Ababa', path);
}

export async function createRuleSet(user: AuthenticatedUser, body: CreateRuleSetBody): Promise<RuleSetDoc> {
  assertSeller(user);
  assertZone(body.timezone, 'timezone');
  const doc = await RuleSet.create({
    _id: randomUUID(),
    referenceId: newReference('AVL-RST'),
    sellerId: user.id,
    status: 'Active',
    ...body,
    description: body.description ?? '',
  });
  return doc.toObject();
}

export async function listRuleSets(user: AuthenticatedUser, query: PageQuery, now = new Date()) {
  const filter = user.role === 'admin' ? {} : { sellerId: user.id };
  const page = await findPage(RuleSet, filter, query, { createdAt: -1 });
  const items = await Promise.all(page.items.map(async (set) => ({ set, ...(await usage(set, now)) })));
  return { items, pagination: page.pagination };
}

/**
 * `bookings`: confirmed bookings of consultations on this rule set; `utilization`: places
 * booked in the next 28 days over the places the rule set offers them in that time.
 */
async function usage(set: RuleSetDoc, now: Date): Promise<{ bookings: number; utilization: number }> {
  const horizon = new Date(now.getTime() + UTILIZATION_DAYS * 86_400_000);
  const [bookings, upcoming, consultations] = await Promise.all([
    Booking.countDocuments({ ruleSetId: set._id, status: 'Confirmed' }),
    Booking.find({ ruleSetId: set._id, status: 'Confirmed', startsAt: { $gte: now, $lt: horizon } }, { places: 1 }).lean(),
    Consultation.find({ ruleSetId: set._id }, { duration: 1, maxCapacity: 1 }).lean<ConsultationDoc[]>(),
  ]);
  const offered = consultations.reduce((sum, c) => {
    const slots = slotsBetween(
      { timezone: set.timezone, rules: set.availabilityRules, durationMinutes: c.duration, bufferMinutes: set.metaData.bufferTime },
      now,
      horizon,
    );
    return sum + slots.length * c.maxCapacity;
  }, 0);
  const booked = upcoming.reduce((sum, b) => sum + (b.places ?? 1), 0);
  return { bookings, utilization: offered === 0 ? 0 : Math.round((booked / offered) * 10_000) / 10_000 };
}

export async function ruleSetDetail(user: AuthenticatedUser, key: string): Promise<RuleSetDoc> {
  const set = await mustFind(RuleSet, key, 'Rule set');
  assertOwner(user, set.sellerId, 'rule set');
  return set;
}

export async function createPricing(user: AuthenticatedUser, body: CreatePricingBody) {
  assertSeller(user);
  const doc = await Pricing.create({
    _id: newInternalId('pr'),
    referenceId: newUnderscoreReference('PR'),
    sellerId: user.id,
    basePriceMinor: body.basePrice,
    currency: body.currency,
    pricingStrategy: body.pricingStrategy,
    comparePriceMinor: body.comparePrice ?? null,
    isOnSale: body.isOnSale,
    isActive: body.isActive,
  });
  return doc.toObject();
}

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

export async function createVisibilityRuleSet(user: AuthenticatedUser, body: CreateVisibilityRuleSetBody) {
  assertSeller(user);
  const doc = await VisibilityRuleSet.create({
    _id: newInternalId('vrs'),
    referenceId: newUnderscoreReference('VRS'),
    sellerId: user.id,
    ...body,
    validFrom: new Date(body.validFrom),
    validTo: new Date(body.validTo),
  });
  return doc.toObject();
}

/**
 * A consultation that is not listed is, to anyone but its seller and an admin, what a missing
 * one is: the same verdict and reason, so its existence does not leak.
 */
export async function visibilityStatus(user: AuthenticatedUser, body: VisibilityStatusBody, now = new Date()) {
  const ids = body.consultationIds;
  const found = await Consultation.find({ $or: [{ _id: { $in: ids } }, { referenceId: { $in: ids } }] }).lean<ConsultationDoc[]>();
  const consultations = ids.map((key) => found.find((c) => c._id === key || c.referenceId === key) ?? null);
  const sellers = [...new Set(consultations.filter((c): c is ConsultationDoc => c !== null).map((c) => c.sellerId))];
  const sets = await VisibilityRuleSet.find({ sellerId: { $in: sellers }, isDefault: true, isActive: true })
    .sort({ createdAt: -1 })
    .lean();
  return body.consultationIds.map((consultationId, index) => {
    const consultation = consultations[index];
    const mayKnow = consultation && (isListed(consultation) || consultation.sellerId === user.id || isAdmin(user));
    if (!consultation || !mayKnow) return { consultationId, visible: false, reason: 'No such consultation' };
    const inForce = ruleSetInForce(
      sets.filter((set) => set.sellerId === consultation.sellerId),
      now,
    );
    return { consultationId, ...decideVisibility(isListed(consultation), inForce, body.context) };
  });
}
