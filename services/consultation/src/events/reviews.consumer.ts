import { SUBSCRIPTIONS } from '@mkt/contracts';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit';
import { onReviewCreated } from './review-created.consumer';
import { onReviewVisibilityChanged } from './review-visibility-changed.consumer';

/** The rating summary of each consultation, from the review service's events (one queue). */
export const reviewsConsumer: ConsumerSpec = defineConsumer({
  subscription: SUBSCRIPTIONS['consultation.reviews'],
  handlers: {
    'review.created': onReviewCreated,
    'review.visibility_changed': onReviewVisibilityChanged,
  },
});
