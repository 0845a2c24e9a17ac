import { SUBSCRIPTIONS } from '@mkt/contracts/review';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit/bus';
import type { Reviews } from '../application/reviews.use-cases';

/** `review.payments`: a captured booking payment makes its buyer's reviews count in the rating. */
export function paymentsConsumer(reviews: Reviews): ConsumerSpec {
  return defineConsumer({
    subscription: SUBSCRIPTIONS['review.payments'],
    handlers: {
      'wallet.booking_payment.captured': (event) => reviews.recordCapture(event.data, event.correlationId),
    },
  });
}
