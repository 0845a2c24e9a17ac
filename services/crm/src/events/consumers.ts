import { SUBSCRIPTIONS } from '@mkt/contracts';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit';
import { onBookingCancelled, onBookingConfirmed, onSessionEvent, onUserRegistered } from '../domain/projection';
import { onBookingRefundCompleted } from './refund-completed';

export const usersConsumer: ConsumerSpec = defineConsumer({
  subscription: SUBSCRIPTIONS['crm.users'],
  handlers: { 'identity.user.registered': (event) => onUserRegistered(event) },
});

export const bookingsConsumer: ConsumerSpec = defineConsumer({
  subscription: SUBSCRIPTIONS['crm.bookings'],
  handlers: {
    'consultation.booking.confirmed': (event) => onBookingConfirmed(event),
    'consultation.booking.cancelled': (event) => onBookingCancelled(event),
    'wallet.booking_refund.completed': (event) => onBookingRefundCompleted(event),
    'consultation.session.completed': (event) => onSessionEvent(event.data.sellerId, event.data.buyerIds, new Date(event.data.endedAt)),
    'consultation.session.no_show': (event) =>
      onSessionEvent(event.data.sellerId, event.data.buyerIds, new Date(event.data.markedAt ?? event.occurredAt)),
  },
});
