import { SUBSCRIPTIONS } from '@mkt/contracts';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit/bus';
import type { Projection } from '../application/projection';
import {
  onBookingCancelled,
  onBookingConfirmed,
  onBookingRefundCompleted,
  onSessionCompleted,
  onSessionNoShow,
  onUserRegistered,
} from '../domain/projection';

export interface CrmConsumers {
  users: ConsumerSpec;
  bookings: ConsumerSpec;
}

/** The CRM's consumers: each event decided by domain/projection.ts, applied by the projection. */
export function crmConsumers(projection: Projection): CrmConsumers {
  return {
    users: defineConsumer({
      subscription: SUBSCRIPTIONS['crm.users'],
      handlers: { 'identity.user.registered': (event) => projection.registerUser(onUserRegistered(event)) },
    }),
    bookings: defineConsumer({
      subscription: SUBSCRIPTIONS['crm.bookings'],
      handlers: {
        'consultation.booking.confirmed': (event) => projection.apply(onBookingConfirmed(event)),
        'consultation.booking.cancelled': (event) => projection.apply(onBookingCancelled(event)),
        'wallet.booking_refund.completed': (event) => projection.apply(onBookingRefundCompleted(event)),
        'consultation.session.completed': (event) => projection.apply(onSessionCompleted(event)),
        'consultation.session.no_show': (event) => projection.apply(onSessionNoShow(event)),
      },
    }),
  };
}
