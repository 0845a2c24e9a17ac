import { byIdOrReference, isDuplicateKey, type ConsumerSpec } from '@mkt/kit';
import { Consultation, RatingEntry } from '../db/setup.models';

/** Recomputes the rating summary from one entry per review: a repeat changes nothing. */
export async function refreshRating(consultationId: string): Promise<void> {
  // Summed here, not with $group: FerretDB 1.x answers $sum of a field with 0.
  const ratings = await RatingEntry.find({ consultationId }, { rating: 1 }).lean();
  const total = ratings.length;
  const sum = ratings.reduce((acc, entry) => acc + entry.rating, 0);
  const averageRating = total === 0 ? 0 : Math.round((sum / total) * 100) / 100;
  await Consultation.updateOne({ _id: consultationId }, { $set: { averageRating, totalReviews: total } });
}

export const reviewCreatedConsumer: ConsumerSpec = {
  queue: 'consultation.reviews',
  handlers: {
    'review.created': async (event, { log }) => {
      if (event.data.entityType !== 'consultation_service') return;
      const consultation = await Consultation.findOne(byIdOrReference(event.data.entityId), { _id: 1 }).lean();
      if (!consultation) {
        log.warn({ entityId: event.data.entityId }, 'review of an unknown consultation ignored');
        return;
      }
      try {
        await RatingEntry.create({ _id: event.data.reviewId, consultationId: consultation._id, rating: event.data.rating });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      await refreshRating(consultation._id);
    },
  },
};
