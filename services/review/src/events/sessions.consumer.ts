import { SUBSCRIPTIONS } from '@mkt/contracts/review';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit/bus';
import type { Reviews } from '../application/reviews.use-cases';

/** `review.sessions`: who completed a session of which consultation (and so may review it). */
export function sessionsConsumer(reviews: Reviews): ConsumerSpec {
  return defineConsumer({
    subscription: SUBSCRIPTIONS['review.sessions'],
    handlers: {
      'consultation.session.completed': (event) => reviews.recordCompletedSession(event.data, event.correlationId),
      // A buyer marked absent may still review (and so contest the seller's word in public).
      'consultation.session.no_show': (event) => reviews.recordCompletedSession(event.data, event.correlationId),
    },
  });
}
