import type { Router } from 'express';
import { BookingHoldParams, ok, VoidBookingHoldBody } from '@mkt/contracts';
import { correlationIdOf, currentUser, requireRole, serviceRouter, withInput } from '@mkt/kit';
import type { BookingHolds } from '../application/booking-holds';
import { holdAdminView } from './views';

/**
 * `/wallets/booking-holds/{bookingId}` (admins only, checked before anything is looked up so
 * nobody else learns which bookings have holds): a hold's state, and its void by hand — the
 * last resort for a hold that never ends.
 */
export function bookingHoldsRouter(holds: BookingHolds): Router {
  const router = serviceRouter();
  const adminOnly = requireRole('admin');
  router.get(
    '/booking-holds/:bookingId',
    adminOnly,
    withInput({ params: BookingHoldParams }, async (input, _req, res) => {
      res.json(ok(holdAdminView(await holds.get(input.params.bookingId))));
    }),
  );
  router.post(
    '/booking-holds/:bookingId/void',
    adminOnly,
    withInput({ params: BookingHoldParams, body: VoidBookingHoldBody }, async (input, req, res) => {
      const record = await holds.voidByAdmin(input.params.bookingId, currentUser(req), input.body.reason, correlationIdOf(req));
      res.json(ok(holdAdminView(record), 'Hold voided: the amount went back to the buyer'));
    }),
  );
  return router;
}
