import {
  BookingListQuery,
  CancelBookingBody,
  CreateBookingBody,
  DisputeNoShowBody,
  EndSessionBody,
  KeyParams,
  NoShowBody,
  SessionListQuery,
  StartSessionBody,
  ok,
} from '@mkt/contracts';
import {
  adminRequestOf,
  correlationIdOf,
  currentUser,
  handle,
  sendReceiptPage,
  type IdempotentRequests,
  type MountOptions,
} from '@mkt/kit';
import type { Bookings } from '../application/bookings';
import type { Sessions } from '../application/sessions';
import {
  bookingListItem,
  bookingReceiptDocument,
  bookingReceiptView,
  bookingView,
  cancelledView,
  noShowView,
  sessionListItem,
} from './views';

/** `/consultations/bookings` and `/consultations/sessions` (behind a token). */
export function bookingHandlers(bookings: Bookings, sessions: Sessions, bookingRequests: IdempotentRequests): MountOptions['handlers'] {
  return {
    'POST /consultations/bookings': handle({ body: CreateBookingBody }, async (input, req, res) => {
      const user = currentUser(req);
      // It moves money: a retry under the same Idempotency-Key gets the first answer, never a second hold.
      const answer = await bookingRequests.run('booking', user.id, req.header('idempotency-key'), req.body, async (attempt) => {
        const booking = await bookings.create(user, input.body, correlationIdOf(req), attempt);
        // The wallet did not answer in time: the booking's current status, finished by the sweep.
        const message = booking.status === 'Confirmed' ? 'Booking confirmed' : 'Booking payment pending';
        return { status: 200, body: ok(bookingView(booking), message) };
      });
      res.status(answer.status).json(answer.body);
    }),
    'GET /consultations/bookings/{id}': handle({ params: KeyParams }, async (input, req, res) => {
      res.json(ok(bookingView(await bookings.get(currentUser(req), input.params.id))));
    }),
    // A booking's receipt, as JSON and as a printable page (its buyer, its seller or an admin).
    'GET /consultations/bookings/{id}/receipt': handle({ params: KeyParams }, async (input, req, res) => {
      const { booking, amounts } = await bookings.receipt(currentUser(req), input.params.id);
      res.set('Cache-Control', 'private, no-store').json(ok(bookingReceiptView(booking, amounts)));
    }),
    'GET /consultations/bookings/{id}/receipt.html': handle({ params: KeyParams }, async (input, req, res) => {
      const { booking, amounts } = await bookings.receipt(currentUser(req), input.params.id);
      sendReceiptPage(res, bookingReceiptDocument(booking, amounts));
    }),
    'GET /consultations/bookings': handle({ query: BookingListQuery }, async (input, req, res) => {
      const { items, pagination } = await bookings.list(currentUser(req), input.query);
      res.json(ok({ bookings: items.map(bookingListItem), pagination }));
    }),
    'POST /consultations/bookings/cancel': handle({ body: CancelBookingBody }, async (input, req, res) => {
      res.json(ok(cancelledView(await bookings.cancel(currentUser(req), input.body, correlationIdOf(req))), 'Booking cancelled'));
    }),
    'GET /consultations/sessions': handle({ query: SessionListQuery }, async (input, req, res) => {
      const { items, pagination } = await sessions.list(currentUser(req), input.query);
      res.json(ok({ sessions: items.map(sessionListItem), pagination }));
    }),
    'POST /consultations/sessions/{id}/start': handle({ params: KeyParams, body: StartSessionBody }, async (input, req, res) => {
      const { actualStartTime, notes } = input.body;
      const s = await sessions.move(currentUser(req), input.params.id, 'start', { at: actualStartTime, notes }, adminRequestOf(req));
      res.json(ok({ sessionId: s._id, status: s.status, startedAt: s.startedAt?.toISOString() ?? null }, 'Session started'));
    }),
    'POST /consultations/sessions/{id}/end': handle({ params: KeyParams, body: EndSessionBody }, async (input, req, res) => {
      const { actualEndTime, ...details } = input.body;
      const s = await sessions.move(currentUser(req), input.params.id, 'end', { at: actualEndTime, ...details }, adminRequestOf(req));
      const data = { sessionId: s._id, status: s.status, endedAt: s.endedAt?.toISOString() ?? null, duration: s.duration };
      res.json(ok(data, 'Session ended'));
    }),
    'POST /consultations/sessions/{id}/no-show': handle({ params: KeyParams, body: NoShowBody }, async (input, req, res) => {
      const s = await sessions.move(currentUser(req), input.params.id, 'no-show', input.body, adminRequestOf(req));
      res.json(ok(noShowView(s), 'Session marked as no-show'));
    }),
    'POST /consultations/sessions/{id}/dispute': handle({ params: KeyParams, body: DisputeNoShowBody }, async (input, req, res) => {
      const disputed = await sessions.dispute(currentUser(req), input.params.id, input.body.reason, correlationIdOf(req));
      res.json(ok(disputed, 'No-show disputed: an admin decides before the seller is paid'));
    }),
  };
}
