import type { RequestHandler, Router } from 'express';
import {
  CreateDiscountBody,
  CreatePricingBody,
  CreateRuleSetBody,
  CreateVisibilityRuleSetBody,
  KeyParams,
  PageQuery,
  ValidateCouponBody,
  VisibilityStatusBody,
  minorToMajor,
  ok,
} from '@mkt/contracts';
import { currentUser, serviceRouter, withInput } from '@mkt/kit';
import {
  createDiscount,
  createPricing,
  createRuleSet,
  createVisibilityRuleSet,
  listRuleSets,
  ruleSetDetail,
  validateCoupon,
  visibilityStatus,
} from '../domain/setup';
import { ruleSetView } from './views';

/**
 * Rule sets, pricing, discounts and visibility. The token is checked here, on the same
 * case-sensitive, strict matching as the routes below: no spelling of a path reaches a
 * handler without it.
 */
export function setupRouter(auth: RequestHandler): Router {
  const router = serviceRouter();
  router.use(['/availability-rule-sets', '/pricing', '/visibility'], auth);
  const ruleSets = '/availability-rule-sets/rule-sets';
  router.post(
    ruleSets,
    withInput({ body: CreateRuleSetBody }, async (input, req, res) => {
      const r = ruleSetView(await createRuleSet(currentUser(req), input.body));
      res.json(
        ok(
          { id: r.id, referenceId: r.referenceId, name: r.name, status: r.status, timezone: r.timezone, createdAt: r.createdAt },
          'Rule set created',
        ),
      );
    }),
  );
  router.get(
    ruleSets,
    withInput({ query: PageQuery.strict() }, async (input, req, res) => {
      const { items, pagination } = await listRuleSets(currentUser(req), input.query);
      const data = items.map(({ set, bookings, utilization }) => ({
        id: set._id,
        referenceId: set.referenceId,
        name: set.name,
        status: set.status,
        bookings,
        utilization,
        timezone: set.timezone,
      }));
      res.json(ok(data, 'Rule sets retrieved', pagination));
    }),
  );
  router.get(
    `${ruleSets}/:id`,
    withInput({ params: KeyParams }, async (input, req, res) => {
      res.json(ok(ruleSetView(await ruleSetDetail(currentUser(req), input.params.id))));
    }),
  );

  router.post(
    '/pricing',
    withInput({ body: CreatePricingBody }, async (input, req, res) => {
      const p = await createPricing(currentUser(req), input.body);
      res.json(
        ok(
          {
            id: p._id,
            referenceId: p.referenceId,
            basePrice: minorToMajor(p.basePriceMinor),
            currency: p.currency,
            isOnSale: p.isOnSale,
            createdAt: p.createdAt.toISOString(),
          },
          'Pricing created',
        ),
      );
    }),
  );
  router.post(
    '/pricing/promotional-discounts',
    withInput({ body: CreateDiscountBody }, async (input, req, res) => {
      const d = await createDiscount(currentUser(req), input.body);
      const discountValue = d.discountType === 'Fixed' ? minorToMajor(d.discountValue) : d.discountValue;
      res.json(
        ok(
          {
            id: d._id,
            referenceId: d.referenceId,
            name: d.name,
            couponCode: d.couponCode,
            discountType: d.discountType,
            discountValue,
            isActive: d.isActive,
          },
          'Discount created',
        ),
      );
    }),
  );
  router.post(
    '/pricing/promotional-discounts/validate-coupon',
    withInput({ body: ValidateCouponBody }, async (input, req, res) => {
      res.json(ok(await validateCoupon(currentUser(req), input.body.couponCode, input.body.consultationId)));
    }),
  );

  router.post(
    '/visibility/rule-sets',
    withInput({ body: CreateVisibilityRuleSetBody }, async (input, req, res) => {
      const v = await createVisibilityRuleSet(currentUser(req), input.body);
      res.json(
        ok(
          { id: v._id, referenceId: v.referenceId, name: v.name, isActive: v.isActive, createdAt: v.createdAt.toISOString() },
          'Visibility rule set created',
        ),
      );
    }),
  );
  router.post(
    '/visibility/status',
    withInput({ body: VisibilityStatusBody }, async (input, req, res) => {
      res.json(ok({ consultations: await visibilityStatus(currentUser(req), input.body) }));
    }),
  );
  return router;
}
