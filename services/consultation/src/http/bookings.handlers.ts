import type { OPERATIONS } from '@mkt/contracts/consultation';
import { adminRequestOf, correlationIdOf, sendReceiptPage, type OperationHandlers } from '@mkt/kit/http';
import type { Bookings } from '../application/bookings.use-cases';
import type { Sessions } from '../application/sessions.use-cases';
import {
  bookingListItem,
  bookingReceiptDocument,
  bookingReceiptView,
  bookingView,
  cancelledView,
  noShowView,
  sessionListItem,
} from './views';

type Handlers = OperationHandlers<typeof OPERATIONS, 'consultation'>;

/** `/consultations/bookings` and `/consultations/sessions` (behind a token). */
export function bookingHandlers(
  bookings: Bookings,
  sessions: Sessions,
): Pick<
  Handlers,
  | 'createBooking'
  | 'getBooking'
  | 'getBookingReceipt'
  | 'getBookingReceiptPage'
  | 'listBookings'
  | 'cancelBooking'
  | 'listSessions'
  | 'startSession'
  | 'endSession'
  | 'markSessionNoShow'
  | 'disputeSessionNoShow'
> {
  return {
    // Keyed (the entry is idempotent): kit runs it once per Idempotency-Key, so a retry never holds twice.
    createBooking: async ({ body }, { req, user, attempt }) => {
      const booking = await bookings.create(user, body, correlationIdOf(req), attempt);
      // The wallet did not answer in time: the booking's current status, finished by the sweep.
      return { data: bookingView(booking), message: booking.status === 'Confirmed' ? 'Booking confirmed' : 'Booking payment pending' };
    },
    getBooking: async ({ params }, { user }) => ({ data: bookingView(await bookings.get(user, params.id)) }),
    // A booking's receipt, as JSON and as a printable page (its buyer, its seller or an admin).
    getBookingReceipt: async ({ params }, { res, user }) => {
      const { booking, amounts } = await bookings.receipt(user, params.id);
      res.set('Cache-Control', 'private, no-store');
      return { data: bookingReceiptView(booking, amounts) };
    },
    getBookingReceiptPage: async ({ params }, { res, user }) => {
      const { booking, amounts } = await bookings.receipt(user, params.id);
      sendReceiptPage(res, bookingReceiptDocument(booking, amounts));
    },
    listBookings: async ({ query }, { user }) => {
      const { items, pagination } = await bookings.list(user, query);
      return { data: { bookings: items.map(bookingListItem), pagination } };
    },
    cancelBooking: async ({ body }, { req, user }) => ({
      data: cancelledView(await bookings.cancel(user, body, correlationIdOf(req))),
      message: 'Booking cancelled',
    }),
    listSessions: async ({ query }, { user }) => {
      const { items, pagination } = await sessions.list(user, query);
      return { data: { sessions: items.map(sessionListItem), pagination } };
    },
    startSession: async ({ params, body }, { req, user }) => {
      const { actualStartTime, notes } = body;
      const s = await sessions.move(user, params.id, 'start', { at: actualStartTime, notes }, adminRequestOf(req));
      return { data: { sessionId: s._id, status: s.status, startedAt: s.startedAt?.toISOString() ?? null }, message: 'Session started' };
    },
    endSession: async ({ params, body }, { req, user }) => {
      const { actualEndTime, ...details } = body;
      const s = await sessions.move(user, params.id, 'end', { at: actualEndTime, ...details }, adminRequestOf(req));
      const data = { sessionId: s._id, status: s.status, endedAt: s.endedAt?.toISOString() ?? null, duration: s.duration };
      return { data, message: 'Session ended' };
    },
    markSessionNoShow: async ({ params, body }, { req, user }) => {
      const s = await sessions.move(user, params.id, 'no-show', body, adminRequestOf(req));
      return { data: noShowView(s), message: 'Session marked as no-show' };
    },
    disputeSessionNoShow: async ({ params, body }, { req, user }) => ({
      data: await sessions.dispute(user, params.id, body.reason, correlationIdOf(req)),
      message: 'No-show disputed: an admin decides before the seller is paid',
    }),
  };
}
