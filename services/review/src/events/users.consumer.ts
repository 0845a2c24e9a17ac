import { SUBSCRIPTIONS } from '@mkt/contracts/review';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit/bus';
import type { Reviews } from '../application/reviews.use-cases';

/** `review.users`: every new user's name, shown beside their reviews. */
export function usersConsumer(reviews: Reviews): ConsumerSpec {
  return defineConsumer({
    subscription: SUBSCRIPTIONS['review.users'],
    handlers: {
      'identity.user.registered': (event) => reviews.recordReviewer(event.data.userId, event.data.fullName),
    },
  });
}
