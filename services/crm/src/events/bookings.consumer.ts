import { SUBSCRIPTIONS } from '@mkt/contracts/crm';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit/bus';
import type { Projection } from '../application/projection.use-cases';
import {
  onBookingCancelled,
  onBookingConfirmed,
  onBookingRefundCompleted,
  onSessionCompleted,
  onSessionNoShow,
} from '../domain/projection';

/** `crm.bookings`: each booking event decided by domain/projection.ts, applied by the projection. */
export function bookingsConsumer(projection: Projection): ConsumerSpec {
  return defineConsumer({
    subscription: SUBSCRIPTIONS['crm.bookings'],
    handlers: {
      'consultation.booking.confirmed': (event) => projection.apply(onBookingConfirmed(event)),
      'consultation.booking.cancelled': (event) => projection.apply(onBookingCancelled(event)),
      'wallet.booking_refund.completed': (event) => projection.apply(onBookingRefundCompleted(event)),
      'consultation.session.completed': (event) => projection.apply(onSessionCompleted(event)),
      'consultation.session.no_show': (event) => projection.apply(onSessionNoShow(event)),
    },
  });
}
