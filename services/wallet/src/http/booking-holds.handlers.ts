import type { Request } from 'express';
import { BookingHoldParams, CreateBookingHoldBody, ok } from '@mkt/contracts/wallet';
import { adminRequestOf, correlationIdOf, handle, saneIdHeader, type MountOptions } from '@mkt/kit/http';
import type { BookingHolds } from '../application/booking-holds.use-cases';
import { InsufficientFunds } from '../domain/errors';
import type { WalletOperations } from './operations';
import { holdAdminView, holdView } from './views';

/**
 * The booking's correlation id, which the consultation sends in `x-correlation-id` (the request
 * that made the booking): the hold keeps it, so its events and the sweeps' logs follow the
 * booking. Absent or unusable: this request's own id.
 */
function bookingCorrelationId(req: Request): string {
  return saneIdHeader(req, 'x-correlation-id') ?? correlationIdOf(req);
}

/**
 * The holds of paid bookings, service to service: `/internal/holds` (the shared
 * INTERNAL_API_TOKEN in `x-internal-token`, never a user's token; the gateway has no route
 * there): the hold (idempotent by bookingId) and its void. Entries of the internal table
 * (`INTERNAL_ENDPOINTS`), which has no operationIds: keyed `METHOD /path`.
 */
export function internalHoldHandlers(holds: BookingHolds): MountOptions['handlers'] {
  return {
    'POST /internal/holds': handle({ body: CreateBookingHoldBody }, async (input, req, res) => {
      const record = await holds.hold(input.body, bookingCorrelationId(req));
      // Refused for want of funds: the same answer however often it is asked.
      if (record.status === 'Rejected') throw new InsufficientFunds();
      res.json(ok(holdView(record), record.status === 'Voided' ? 'The booking was given up' : 'Amount held'));
    }),
    'POST /internal/holds/{bookingId}/void': handle({ params: BookingHoldParams }, async (input, req, res) => {
      res.json(ok(holdView(await holds.void(input.params.bookingId, bookingCorrelationId(req))), 'Hold voided'));
    }),
  };
}

/**
 * `/wallets/booking-holds/{bookingId}` (admins only, checked before anything is looked up so
 * nobody else learns which bookings have holds): a hold's state; its void by hand (a Held hold,
 * or a capture not carried out yet: a no-show within its dispute window); and the ruling on a
 * disputed no-show for the seller.
 */
export function bookingHoldOperations(
  holds: BookingHolds,
): WalletOperations<'getBookingHold' | 'voidBookingHold' | 'upholdBookingHoldCapture'> {
  return {
    getBookingHold: async ({ params }) => ({ data: holdAdminView(await holds.get(params.bookingId)) }),
    voidBookingHold: async ({ params, body }, { req, user }) => ({
      data: holdAdminView(await holds.voidByAdmin(params.bookingId, user, body.reason, adminRequestOf(req))),
      message: 'Hold voided: the amount went back to the buyer',
    }),
    upholdBookingHoldCapture: async ({ params, body }, { req, user }) => ({
      data: holdAdminView(await holds.upholdCapture(params.bookingId, user, body.reason, adminRequestOf(req))),
      message: 'Dispute ruled for the seller: the capture goes on',
    }),
  };
}
