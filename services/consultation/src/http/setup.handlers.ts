import {
  CreateDiscountBody,
  CreatePricingBody,
  CreateRuleSetBody,
  CreateVisibilityRuleSetBody,
  KeyParams,
  PageQuery,
  ValidateCouponBody,
  VisibilityStatusBody,
  ok,
} from '@mkt/contracts';
import { currentUser, handle, type MountOptions } from '@mkt/kit';
import type { Setup } from '../application/setup';
import { couponCheckView, discountView, pricingView, ruleSetListItem, ruleSetView, visibilityRuleSetView } from './views';

/** Rule sets, pricing, discounts and visibility (behind a token). */
export function setupHandlers(setup: Setup): MountOptions['handlers'] {
  return {
    'POST /consultations/availability-rule-sets/rule-sets': handle({ body: CreateRuleSetBody }, async (input, req, res) => {
      const r = ruleSetView(await setup.createRuleSet(currentUser(req), input.body));
      const data = { id: r.id, referenceId: r.referenceId, name: r.name, status: r.status, timezone: r.timezone, createdAt: r.createdAt };
      res.json(ok(data, 'Rule set created'));
    }),
    'GET /consultations/availability-rule-sets/rule-sets': handle({ query: PageQuery }, async (input, req, res) => {
      const { items, pagination } = await setup.listRuleSets(currentUser(req), input.query);
      res.json(ok(items.map(ruleSetListItem), 'Rule sets retrieved', pagination));
    }),
    'GET /consultations/availability-rule-sets/rule-sets/{id}': handle({ params: KeyParams }, async (input, req, res) => {
      res.json(ok(ruleSetView(await setup.ruleSetDetail(currentUser(req), input.params.id))));
    }),
    'POST /consultations/pricing': handle({ body: CreatePricingBody }, async (input, req, res) => {
      res.json(ok(pricingView(await setup.createPricing(currentUser(req), input.body)), 'Pricing created'));
    }),
    'POST /consultations/pricing/promotional-discounts': handle({ body: CreateDiscountBody }, async (input, req, res) => {
      res.json(ok(discountView(await setup.createDiscount(currentUser(req), input.body)), 'Discount created'));
    }),
    'POST /consultations/pricing/promotional-discounts/validate-coupon': handle({ body: ValidateCouponBody }, async (input, req, res) => {
      res.json(ok(couponCheckView(await setup.validateCoupon(currentUser(req), input.body))));
    }),
    'POST /consultations/visibility/rule-sets': handle({ body: CreateVisibilityRuleSetBody }, async (input, req, res) => {
      res.json(ok(visibilityRuleSetView(await setup.createVisibilityRuleSet(currentUser(req), input.body)), 'Visibility rule set created'));
    }),
    'POST /consultations/visibility/status': handle({ body: VisibilityStatusBody }, async (input, req, res) => {
      res.json(ok({ consultations: await setup.visibilityStatus(currentUser(req), input.body) }));
    }),
  };
}
