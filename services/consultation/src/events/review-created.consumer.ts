import type { IntegrationEvent } from '@mkt/contracts';
import { byIdOrReference, isDuplicateKey, type Logger } from '@mkt/kit';
import { Consultation, RatingEntry } from '../db/setup.models';

/**
 * Recomputes the rating summary from the entries of active reviews (a hidden review's entry
 * stays, out of the average); a repeat changes nothing.
 */
export async function refreshRating(consultationId: string): Promise<void> {
  // Summed here, not with $group: FerretDB 1.x answers $sum of a field with 0.
  const ratings = await RatingEntry.find({ consultationId, isActive: { $ne: false } }, { rating: 1 }).lean();
  const total = ratings.length;
  const sum = ratings.reduce((acc, entry) => acc + entry.rating, 0);
  const averageRating = total === 0 ? 0 : Math.round((sum / total) * 100) / 100;
  await Consultation.updateOne({ _id: consultationId }, { $set: { averageRating, totalReviews: total } });
}

/** The consultation a review is about, by id or reference; null (logged) when it is not ours. */
export async function reviewedConsultation(data: { entityType: string; entityId: string }, log: Logger): Promise<string | null> {
  if (data.entityType !== 'consultation_service') return null;
  const consultation = await Consultation.findOne(byIdOrReference(data.entityId), { _id: 1 }).lean();
  if (!consultation) log.warn({ entityId: data.entityId }, 'review of an unknown consultation ignored');
  return consultation?._id ?? null;
}

/**
 * Whether a review event may touch the rating: a review from a buyer who only had free places
 * (`countsInRating: false`) never does — farmed free bookings cannot lift a consultation's
 * rating. A review starts to count only later (never stops), by a newer visibility change.
 */
export function countsInRating(data: { countsInRating?: boolean }): boolean {
  return data.countsInRating !== false;
}

/**
 * One rating entry per counting review (an entry a visibility change made first is kept as it
 * is); a review that does not count gets none.
 */
export async function onReviewCreated(event: IntegrationEvent<'review.created'>, { log }: { log: Logger }): Promise<void> {
  if (!countsInRating(event.data)) return;
  const consultationId = await reviewedConsultation(event.data, log);
  if (!consultationId) return;
  try {
    await RatingEntry.create({ _id: event.data.reviewId, consultationId, rating: event.data.rating });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  await refreshRating(consultationId);
}
