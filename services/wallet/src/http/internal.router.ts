import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Router } from 'express';
import { BookingHoldParams, CreateBookingHoldBody, ok } from '@mkt/contracts';
import { correlationIdOf, saneIdHeader, Unauthenticated, withInput, serviceRouter } from '@mkt/kit';
import type { BookingHolds } from '../application/booking-holds';
import { InsufficientFunds } from '../domain/wallet.errors';
import { holdView } from './views';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Service-to-service calls: the shared INTERNAL_API_TOKEN in `x-internal-token`, compared in
 * constant time (digests of equal length). Never a user's token; the gateway has no route here.
 */
export function requireServiceToken(token: string): RequestHandler {
  const expected = token ? digest(token) : null;
  return (req, _res, next) => {
    const given = req.header('x-internal-token');
    if (!expected || !given || !timingSafeEqual(digest(given), expected))
      return next(new Unauthenticated('A service credential is required'));
    next();
  };
}

/**
 * The booking's correlation id, which the consultation sends in `x-correlation-id` (the request
 * that made the booking): the hold keeps it, so its events and the sweeps' logs follow the
 * booking. Absent or unusable: this request's own id.
 */
function bookingCorrelationId(req: Request): string {
  return saneIdHeader(req, 'x-correlation-id') ?? correlationIdOf(req);
}

/** `/internal/holds`: the hold of a paid booking (idempotent by bookingId) and its void. */
export function internalRouter(holds: BookingHolds, token: string): Router {
  const router = serviceRouter();
  router.use(requireServiceToken(token));
  router.post(
    '/holds',
    withInput({ body: CreateBookingHoldBody }, async (input, req, res) => {
      const record = await holds.hold(input.body, bookingCorrelationId(req));
      // Refused for want of funds: the same answer however often it is asked.
      if (record.status === 'Rejected') throw new InsufficientFunds();
      res.json(ok(holdView(record), record.status === 'Voided' ? 'The booking was given up' : 'Amount held'));
    }),
  );
  router.post(
    '/holds/:bookingId/void',
    withInput({ params: BookingHoldParams }, async (input, req, res) => {
      res.json(ok(holdView(await holds.void(input.params.bookingId, bookingCorrelationId(req))), 'Hold voided'));
    }),
  );
  return router;
}
