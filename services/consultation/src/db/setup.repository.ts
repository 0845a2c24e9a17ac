import type { PageQuery } from '@mkt/contracts/consultation';
import { Conflict, isDuplicateKey } from '@mkt/kit/domain';
import { findPage } from '@mkt/kit/db';
import type { DiscountDoc, PricingDoc, RuleSetDoc, VisibilityRuleSetDoc } from '../domain/records';
import { buyerUseKey, maxUsesPerBuyerOf } from '../domain/coupons';
import { collectionOf, findByKey } from './collections';
import type { ConsultationModels } from './models';

/** `availability_rule_sets`. */
export class RuleSetRepository {
  constructor(private readonly models: Pick<ConsultationModels, 'RuleSet'>) {}

  findByKey(key: string): Promise<RuleSetDoc | null> {
    return findByKey(this.models.RuleSet, key);
  }

  findById(id: string): Promise<RuleSetDoc | null> {
    return this.models.RuleSet.findById(id).lean<RuleSetDoc>();
  }

  async create(record: Omit<RuleSetDoc, 'createdAt' | 'updatedAt'>): Promise<RuleSetDoc> {
    return (await this.models.RuleSet.create(record)).toObject();
  }

  /** A seller's rule sets (`sellerId` null: everyone's), newest first. */
  page(sellerId: string | null, query: PageQuery) {
    return findPage(this.models.RuleSet, sellerId === null ? {} : { sellerId }, query, { createdAt: -1 });
  }
}

/** `pricing`. */
export class PricingRepository {
  constructor(private readonly models: Pick<ConsultationModels, 'Pricing'>) {}

  findByKey(key: string): Promise<PricingDoc | null> {
    return findByKey(this.models.Pricing, key);
  }

  findById(id: string): Promise<PricingDoc | null> {
    return this.models.Pricing.findById(id).lean<PricingDoc>();
  }

  async create(record: Omit<PricingDoc, 'createdAt'>): Promise<PricingDoc> {
    return (await this.models.Pricing.create(record)).toObject();
  }
}

/** `promotional_discounts`: coupons, and their uses taken and given back (each one guarded write). */
export class DiscountRepository {
  constructor(private readonly models: Pick<ConsultationModels, 'Discount'>) {}

  /** A seller's coupon codes are unique (409 when taken). */
  async create(record: Omit<DiscountDoc, 'createdAt'>): Promise<DiscountDoc> {
    try {
      return (await this.models.Discount.create(record)).toObject();
    } catch (err) {
      if (isDuplicateKey(err)) throw new Conflict('You have a coupon with this code already');
      throw err;
    }
  }

  sellerCoupon(sellerId: string, code: string): Promise<DiscountDoc | null> {
    return this.models.Discount.findOne({ sellerId, couponCode: code.toUpperCase() }).lean<DiscountDoc>();
  }

  findById(id: string): Promise<DiscountDoc | null> {
    return this.models.Discount.findById(id).lean<DiscountDoc>();
  }

  /**
   * Takes one use of a coupon for a buyer's booking, in one conditional write with both limits
   * in its filter: `uses < maxUses`, and the buyer's list of bookings holding a use shorter than
   * `maxUsesPerBuyer` (its element `maxUsesPerBuyer − 1` does not exist) — so of a buyer's racing
   * bookings only as many as the limit leaves get one. `usedBy` makes it once per booking. False
   * when either limit is reached.
   */
  async takeUse(discount: Pick<DiscountDoc, '_id' | 'maxUses' | 'maxUsesPerBuyer'>, bookingId: string, buyerId: string): Promise<boolean> {
    const buyer = `buyerUses.${buyerUseKey(buyerId)}`;
    const { modifiedCount } = await collectionOf(this.models.Discount).updateOne(
      {
        _id: discount._id,
        usedBy: { $ne: bookingId },
        uses: { $lt: discount.maxUses },
        [`${buyer}.${maxUsesPerBuyerOf(discount) - 1}`]: { $exists: false },
      },
      { $inc: { uses: 1 }, $push: { usedBy: bookingId, [buyer]: bookingId } },
    );
    return modifiedCount === 1;
  }

  /**
   * Gives a booking's use back, once: only while the coupon still lists the booking, so a repeat
   * (a retried cancel, the sweep after a crash) changes nothing.
   */
  async releaseUse(discountId: string, bookingId: string, buyerId: string): Promise<void> {
    await collectionOf(this.models.Discount).updateOne(
      { _id: discountId, usedBy: bookingId },
      { $inc: { uses: -1 }, $pull: { usedBy: bookingId, [`buyerUses.${buyerUseKey(buyerId)}`]: bookingId } },
    );
  }
}

/** `visibility_rule_sets`. */
export class VisibilityRuleSetRepository {
  constructor(private readonly models: Pick<ConsultationModels, 'VisibilityRuleSet'>) {}

  async create(record: Omit<VisibilityRuleSetDoc, 'createdAt'>): Promise<VisibilityRuleSetDoc> {
    return (await this.models.VisibilityRuleSet.create(record)).toObject();
  }

  /** The default, active rule sets of some sellers, newest first (which is in force is the domain's call). */
  defaultsOf(sellerIds: string[]): Promise<VisibilityRuleSetDoc[]> {
    return this.models.VisibilityRuleSet.find({ sellerId: { $in: sellerIds }, isDefault: true, isActive: true })
      .sort({ createdAt: -1 })
      .lean<VisibilityRuleSetDoc[]>();
  }
}
