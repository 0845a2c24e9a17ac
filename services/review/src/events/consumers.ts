import { SUBSCRIPTIONS } from '@mkt/contracts';
import { defineConsumer, type ConsumerSpec } from '@mkt/kit';
import { Eligibility, Reviewer } from '../db/review.models';
import { countReviewOfPayingBuyer } from '../domain/reviews';

/**
 * A completed session makes each of its buyers eligible, recording whether they paid for their
 * place (`paidBuyerIds`; absent from an older producer: all did). Paid once stays paid, and a
 * paying buyer's earlier review from a free place starts to count. A repeat changes nothing.
 */
export const sessionsConsumer: ConsumerSpec = defineConsumer({
  subscription: SUBSCRIPTIONS['review.sessions'],
  handlers: {
    'consultation.session.completed': async (event) => {
      const { consultationId, consultationReferenceId, buyerIds, paidBuyerIds, sessionId } = event.data;
      for (const buyerId of buyerIds) {
        const paid = paidBuyerIds?.includes(buyerId) ?? true;
        await Eligibility.updateOne(
          { _id: `${consultationId}|${buyerId}` },
          {
            $set: { consultationId, consultationReferenceId: consultationReferenceId ?? null, buyerId, ...(paid ? { paid: true } : {}) },
            $addToSet: { sessionIds: sessionId },
            // A free place never takes back what a paid one gave.
            ...(paid ? {} : { $setOnInsert: { paid: false } }),
          },
          { upsert: true },
        );
        if (paid) await countReviewOfPayingBuyer(consultationId, buyerId, event.correlationId);
      }
    },
  },
});

export const usersConsumer: ConsumerSpec = defineConsumer({
  subscription: SUBSCRIPTIONS['review.users'],
  handlers: {
    'identity.user.registered': async (event) => {
      await Reviewer.updateOne({ _id: event.data.userId }, { $set: { fullName: event.data.fullName } }, { upsert: true });
    },
  },
});
