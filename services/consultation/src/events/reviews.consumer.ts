import { SUBSCRIPTIONS } from '@mkt/contracts/consultation';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit/bus';
import type { Ratings } from '../application/ratings.use-cases';

/** The rating summary of each consultation, from the review service's events (one queue). */
export function reviewsConsumer(ratings: Ratings): ConsumerSpec {
  return defineConsumer({
    subscription: SUBSCRIPTIONS['consultation.reviews'],
    handlers: {
      'review.created': (event, { log }) => ratings.reviewCreated(event.data, log),
      'review.visibility_changed': (event, { log }) => ratings.reviewVisibilityChanged(event.data, log),
    },
  });
}
