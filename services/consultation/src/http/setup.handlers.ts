import type { OPERATIONS } from '@mkt/contracts/consultation';
import type { OperationHandlers } from '@mkt/kit/http';
import type { Setup } from '../application/setup.use-cases';
import { couponCheckView, discountView, pricingView, ruleSetListItem, ruleSetView, visibilityRuleSetView } from './views';

type Handlers = OperationHandlers<typeof OPERATIONS, 'consultation'>;

/** Rule sets, pricing, discounts and visibility (behind a token). */
export function setupHandlers(
  setup: Setup,
): Pick<
  Handlers,
  | 'createRuleSet'
  | 'listRuleSets'
  | 'getRuleSet'
  | 'createPricing'
  | 'createDiscount'
  | 'validateCoupon'
  | 'createVisibilityRuleSet'
  | 'getVisibilityStatus'
> {
  return {
    createRuleSet: async ({ body }, { user }) => {
      const r = ruleSetView(await setup.createRuleSet(user, body));
      const data = { id: r.id, referenceId: r.referenceId, name: r.name, status: r.status, timezone: r.timezone, createdAt: r.createdAt };
      return { data, message: 'Rule set created' };
    },
    listRuleSets: async ({ query }, { user }) => {
      const { items, pagination } = await setup.listRuleSets(user, query);
      return { data: items.map(ruleSetListItem), message: 'Rule sets retrieved', pagination };
    },
    getRuleSet: async ({ params }, { user }) => ({ data: ruleSetView(await setup.ruleSetDetail(user, params.id)) }),
    createPricing: async ({ body }, { user }) => ({ data: pricingView(await setup.createPricing(user, body)), message: 'Pricing created' }),
    createDiscount: async ({ body }, { user }) => ({
      data: discountView(await setup.createDiscount(user, body)),
      message: 'Discount created',
    }),
    validateCoupon: async ({ body }, { user }) => ({ data: couponCheckView(await setup.validateCoupon(user, body)) }),
    createVisibilityRuleSet: async ({ body }, { user }) => ({
      data: visibilityRuleSetView(await setup.createVisibilityRuleSet(user, body)),
      message: 'Visibility rule set created',
    }),
    getVisibilityStatus: async ({ body }, { user }) => ({ data: { consultations: await setup.visibilityStatus(user, body) } }),
  };
}
