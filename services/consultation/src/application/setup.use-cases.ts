import { randomUUID } from 'node:crypto';
import type {
  CreateDiscountBody,
  CreatePricingBody,
  CreateRuleSetBody,
  CreateVisibilityRuleSetBody,
  PageQuery,
  VisibilityStatusBody,
} from '@mkt/contracts/consultation';
import { NotFound } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import { assertOwner, subjectOf, visibleTo, type References } from '../domain/access';
import { couponCheck, couponProblem } from '../domain/coupons';
import { newDiscount, USING_STATUSES } from '../domain/discounts';
import { newPricing } from '../domain/pricing';
import type { RuleSetDoc } from '../domain/records';
import { newRuleSet, utilization, utilizationWindow } from '../domain/rule-sets';
import { contextOf, newVisibilityRuleSet, sellersOf, visibilityVerdicts } from '../domain/visibility-rule-sets';
import type { BookingRepository } from '../db/booking.repository';
import type { ConsultationRepository } from '../db/consultation.repository';
import type { DiscountRepository, PricingRepository, RuleSetRepository, VisibilityRuleSetRepository } from '../db/setup.repository';
import type { CouponChecks } from './coupon-checks.use-cases';

export interface SetupDeps {
  ruleSets: RuleSetRepository;
  pricing: PricingRepository;
  discounts: DiscountRepository;
  visibility: VisibilityRuleSetRepository;
  consultations: ConsultationRepository;
  bookings: BookingRepository;
  couponChecks: CouponChecks;
  references: References;
}

/** A seller's setup: availability rule sets, prices, coupons, visibility rule sets; and the questions about them. */
export class Setup {
  constructor(private readonly deps: SetupDeps) {}

  createRuleSet(user: AuthenticatedUser, body: CreateRuleSetBody): Promise<RuleSetDoc> {
    return this.deps.ruleSets.create(newRuleSet(user, body, this.deps.references, randomUUID()));
  }

  /** How many shapes rule-set listings have counted slots for since the process started (see `utilization`). */
  readonly usage = { shapesCounted: 0 };

  /**
   * The caller's rule sets (an admin's: all) with `bookings` and `utilization` (see
   * `utilization`): the page's consultations and bookings read grouped, in three commands for the
   * whole page, and slots counted once per rule set and duration.
   */
  async listRuleSets(user: AuthenticatedUser, query: PageQuery, now = new Date()) {
    const page = await this.deps.ruleSets.page(user.role === 'admin' ? null : user.id, query);
    const window = utilizationWindow(now);
    const ids = page.items.map((set) => set._id);
    const [usage, shapes] = await Promise.all([
      this.deps.bookings.usageOfRuleSets(ids, window),
      this.deps.consultations.shapesOnRuleSets(ids),
    ]);
    const items = page.items.map((set) => {
      const { bookings, places } = usage.get(set._id)!;
      const used = utilization(set, shapes.get(set._id)!, places, window);
      this.usage.shapesCounted += used.shapesCounted;
      return { set, bookings, utilization: used.utilization };
    });
    return { items, pagination: page.pagination };
  }

  async ruleSetDetail(user: AuthenticatedUser, key: string): Promise<RuleSetDoc> {
    const set = await this.deps.ruleSets.findByKey(key);
    if (!set) throw new NotFound('Rule set');
    assertOwner(user, set.sellerId, 'rule set');
    return set;
  }

  createPricing(user: AuthenticatedUser, body: CreatePricingBody) {
    return this.deps.pricing.create(newPricing(user, body));
  }

  createDiscount(user: AuthenticatedUser, body: CreateDiscountBody) {
    return this.deps.discounts.create(newDiscount(user, body));
  }

  /**
   * What a coupon would do to a consultation's price now (no use is taken), for the caller or the
   * user `userId` names (only themselves; an admin anyone — see `subjectOf`). Throttled per
   * caller; the consultation must be one the caller may know of; a coupon that cannot be used
   * shows nothing of itself (see `couponCheck`), not even whether the user used it.
   */
  async validateCoupon(user: AuthenticatedUser, body: { couponCode: string; consultationId: string; userId?: string }, now = new Date()) {
    const { consultations, pricing, discounts, bookings } = this.deps;
    // Checked before anything counts: a refused question changes nothing.
    const subject = subjectOf(user, body.userId);
    await this.deps.couponChecks.count(user.id, now);
    const consultation = visibleTo(user, await consultations.findByKey(body.consultationId));
    const price = await pricing.findById(consultation.pricingId);
    const found = await discounts.sellerCoupon(consultation.sellerId, body.couponCode);
    // What the user holds counts only for a coupon that can be used at all (else it shows nothing).
    const held =
      found && !couponProblem(found, price?.basePriceMinor ?? 0, now) ? await bookings.couponUsesOf(found._id, USING_STATUSES, subject) : 0;
    const check = couponCheck(found, price, now, held);
    return { ...check, usedByUser: check.discount ? held > 0 : false };
  }

  createVisibilityRuleSet(user: AuthenticatedUser, body: CreateVisibilityRuleSetBody) {
    return this.deps.visibility.create(newVisibilityRuleSet(user, body));
  }

  /** The verdicts of `visibilityVerdicts` over the consultations and their sellers' rule sets, read in two queries. */
  async visibilityStatus(user: AuthenticatedUser, body: VisibilityStatusBody, now = new Date()) {
    const context = contextOf(user, body);
    const found = await this.deps.consultations.findByKeys(body.consultationIds);
    const sets = await this.deps.visibility.defaultsOf(sellersOf(found));
    return visibilityVerdicts(user, body.consultationIds, found, sets, context, now);
  }
}
