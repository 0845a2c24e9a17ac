import { SUBSCRIPTIONS } from '@mkt/contracts';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit/bus';
import type { Reviews } from '../application/reviews';

/** The review service's consumers: each a thin adapter to a use case of `Reviews`. */
export function reviewConsumers(reviews: Reviews): { sessions: ConsumerSpec; payments: ConsumerSpec; users: ConsumerSpec } {
  return {
    sessions: defineConsumer({
      subscription: SUBSCRIPTIONS['review.sessions'],
      handlers: {
        'consultation.session.completed': (event) => reviews.recordCompletedSession(event.data, event.correlationId),
        // A buyer marked absent may still review (and so contest the seller's word in public).
        'consultation.session.no_show': (event) => reviews.recordCompletedSession(event.data, event.correlationId),
      },
    }),
    payments: defineConsumer({
      subscription: SUBSCRIPTIONS['review.payments'],
      handlers: {
        'wallet.booking_payment.captured': (event) => reviews.recordCapture(event.data, event.correlationId),
      },
    }),
    users: defineConsumer({
      subscription: SUBSCRIPTIONS['review.users'],
      handlers: {
        'identity.user.registered': (event) => reviews.recordReviewer(event.data.userId, event.data.fullName),
      },
    }),
  };
}
