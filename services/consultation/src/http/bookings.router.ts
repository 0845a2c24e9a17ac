import { Router } from 'express';
import {
  BookingListQuery,
  CancelBookingBody,
  CreateBookingBody,
  EndSessionBody,
  KeyParams,
  NoShowBody,
  SessionListQuery,
  StartSessionBody,
  minorToMajor,
  ok,
} from '@mkt/contracts';
import { correlationIdOf, currentUser, validate } from '@mkt/kit';
import type { Bookings } from '../domain/bookings';
import type { Sessions } from '../domain/sessions';
import { bookingListItem, bookingView, sessionListItem } from './views';

/** `/consultations/bookings` and `/consultations/sessions` (behind a token). */
export function bookingsRouter(bookings: Bookings, sessions: Sessions): Router {
  const router = Router();
  router.post('/bookings', validate({ body: CreateBookingBody }), async (req, res) => {
    const booking = await bookings.create(currentUser(req), res.locals.body, correlationIdOf(req));
    // The wallet did not answer in time: the booking's current status, finished by the sweep.
    const message = booking.status === 'Confirmed' ? 'Booking confirmed' : 'Booking payment pending';
    res.json(ok(bookingView(booking), message));
  });
  router.get('/bookings/:id', validate({ params: KeyParams }), async (req, res) => {
    res.json(ok(bookingView(await bookings.get(currentUser(req), res.locals.params.id))));
  });
  router.get('/bookings', validate({ query: BookingListQuery }), async (req, res) => {
    const { items, pagination } = await bookings.list(currentUser(req), res.locals.query);
    res.json(ok({ bookings: items.map(bookingListItem), pagination }));
  });
  router.post('/bookings/cancel', validate({ body: CancelBookingBody }), async (req, res) => {
    const b = await bookings.cancel(currentUser(req), res.locals.body, correlationIdOf(req));
    res.json(
      ok(
        {
          bookingId: b._id,
          status: b.status,
          refundStatus: b.refundStatus,
          refundAmount: minorToMajor(b.refundAmountMinor ?? 0),
          cancelledAt: b.cancelledAt?.toISOString() ?? null,
        },
        'Booking cancelled',
      ),
    );
  });

  router.get('/sessions', validate({ query: SessionListQuery }), async (req, res) => {
    const { items, pagination } = await sessions.list(currentUser(req), res.locals.query);
    res.json(ok({ sessions: items.map(sessionListItem), pagination }));
  });
  router.post('/sessions/:id/start', validate({ params: KeyParams, body: StartSessionBody }), async (req, res) => {
    const { actualStartTime, notes } = res.locals.body;
    const s = await sessions.move(currentUser(req), res.locals.params.id, 'start', { at: actualStartTime, notes }, correlationIdOf(req));
    res.json(ok({ sessionId: s._id, status: s.status, startedAt: s.startedAt?.toISOString() ?? null }, 'Session started'));
  });
  router.post('/sessions/:id/end', validate({ params: KeyParams, body: EndSessionBody }), async (req, res) => {
    const { actualEndTime, ...details } = res.locals.body;
    const s = await sessions.move(currentUser(req), res.locals.params.id, 'end', { at: actualEndTime, ...details }, correlationIdOf(req));
    res.json(ok({ sessionId: s._id, status: s.status, endedAt: s.endedAt?.toISOString() ?? null, duration: s.duration }, 'Session ended'));
  });
  router.post('/sessions/:id/no-show', validate({ params: KeyParams, body: NoShowBody }), async (req, res) => {
    const s = await sessions.move(
      currentUser(req),
      res.locals.params.id,
      'no-show',
      { notes: res.locals.body.notes },
      correlationIdOf(req),
    );
    res.json(ok({ sessionId: s._id, status: s.status, markedAt: s.markedAt?.toISOString() ?? null }, 'Session marked as no-show'));
  });
  return router;
}
