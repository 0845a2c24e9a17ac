import type { Router } from 'express';
import { CreateDiscountBody, CreatePricingBody, ValidateCouponBody, minorToMajor, ok } from '@mkt/contracts';
import { currentUser, serviceRouter, withInput } from '@mkt/kit';
import { createDiscount, validateCoupon } from '../domain/discounts';
import { createPricing } from '../domain/pricing';

/** Pricing and promotional discounts (coupons); behind the token `setupRouter` checks. */
export function pricingRouter(): Router {
  const router = serviceRouter();
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
  return router;
}
