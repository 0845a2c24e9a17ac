import type { ConsumerSpec } from '@mkt/kit';
import { Eligibility, Reviewer } from '../db/review.models';

/** A completed session makes each of its buyers eligible; a repeat changes nothing. */
export const sessionsConsumer: ConsumerSpec = {
  queue: 'review.sessions',
  handlers: {
    'consultation.session.completed': async (event) => {
      const { consultationId, consultationReferenceId, buyerIds, sessionId } = event.data;
      for (const buyerId of buyerIds) {
        await Eligibility.updateOne(
          { _id: `${consultationId}|${buyerId}` },
          {
            $set: { consultationId, consultationReferenceId: consultationReferenceId ?? null, buyerId },
            $addToSet: { sessionIds: sessionId },
          },
          { upsert: true },
        );
      }
    },
  },
};

export const usersConsumer: ConsumerSpec = {
  queue: 'review.users',
  handlers: {
    'identity.user.registered': async (event) => {
      await Reviewer.updateOne({ _id: event.data.userId }, { $set: { fullName: event.data.fullName } }, { upsert: true });
    },
  },
};
