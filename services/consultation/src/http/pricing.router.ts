import type { Router } from 'express';
import { CreateDiscountBody, CreatePricingBody, ValidateCouponBody, ok } from '@mkt/contracts';
import { currentUser, serviceRouter, withInput } from '@mkt/kit';
import { createDiscount, validateCoupon } from '../domain/discounts';
import { createPricing } from '../domain/pricing';
import { discountView, pricingView } from './views';

/** Pricing and promotional discounts (coupons); behind the token `setupRouter` checks. */
export function pricingRouter(): Router {
  const router = serviceRouter();
  router.post(
    '/pricing',
    withInput({ body: CreatePricingBody }, async (input, req, res) => {
      res.json(ok(pricingView(await createPricing(currentUser(req), input.body)), 'Pricing created'));
    }),
  );
  router.post(
    '/pricing/promotional-discounts',
    withInput({ body: CreateDiscountBody }, async (input, req, res) => {
      res.json(ok(discountView(await createDiscount(currentUser(req), input.body)), 'Discount created'));
    }),
  );
  router.post(
    '/pricing/promotional-discounts/validate-coupon',
    withInput({ body: ValidateCouponBody }, async (input, req, res) => {
      res.json(ok(await validateCoupon(currentUser(req), input.body)));
    }),
  );
  return router;
}
