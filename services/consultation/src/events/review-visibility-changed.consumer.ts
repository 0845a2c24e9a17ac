import type { IntegrationEvent } from '@mkt/contracts';
import { isDuplicateKey, type Logger } from '@mkt/kit';
import { RatingEntry } from '../db/setup.models';
import { countsInRating, refreshRating, reviewedConsultation } from './review-created.consumer';

/**
 * A review hidden or shown again: its entry takes `isActive` when the change is newer than the
 * last one applied (`sequence`), so a repeat or a late older change does nothing; the summary is
 * recomputed either way (idempotent). Arriving before `review.created`, it makes the entry. A
 * change of a review that does not count is ignored; the one saying it now counts (its buyer
 * paid since) makes its entry.
 */
export async function onReviewVisibilityChanged(
  event: IntegrationEvent<'review.visibility_changed'>,
  { log }: { log: Logger },
): Promise<void> {
  if (!countsInRating(event.data)) return;
  const consultationId = await reviewedConsultation(event.data, log);
  if (!consultationId) return;
  const { reviewId, rating, isActive, sequence } = event.data;
  try {
    await RatingEntry.updateOne(
      { _id: reviewId, $or: [{ visibilitySequence: null }, { visibilitySequence: { $lt: sequence } }] },
      { $set: { isActive, visibilitySequence: sequence }, $setOnInsert: { consultationId, rating } },
      { upsert: true },
    );
  } catch (err) {
    // The entry exists with this change or a newer one applied: the upsert met its _id.
    if (!isDuplicateKey(err)) throw err;
  }
  await refreshRating(consultationId);
}
