import type { Router } from 'express';
import { CreateDiscountBody, CreatePricingBody, ValidateCouponBody, ok } from '@mkt/contracts';
import { currentUser, serviceRouter, withInput } from '@mkt/kit';
import type { Setup } from '../application/setup';
import { couponCheckView, discountView, pricingView } from './views';

/** Pricing and promotional discounts (coupons); behind the token `setupRouter` checks. */
export function pricingRouter(setup: Setup): Router {
  const router = serviceRouter();
  router.post(
    '/pricing',
    withInput({ body: CreatePricingBody }, async (input, req, res) => {
      res.json(ok(pricingView(await setup.createPricing(currentUser(req), input.body)), 'Pricing created'));
    }),
  );
  router.post(
    '/pricing/promotional-discounts',
    withInput({ body: CreateDiscountBody }, async (input, req, res) => {
      res.json(ok(discountView(await setup.createDiscount(currentUser(req), input.body)), 'Discount created'));
    }),
  );
  router.post(
    '/pricing/promotional-discounts/validate-coupon',
    withInput({ body: ValidateCouponBody }, async (input, req, res) => {
      res.json(ok(couponCheckView(await setup.validateCoupon(currentUser(req), input.body))));
    }),
  );
  return router;
}
