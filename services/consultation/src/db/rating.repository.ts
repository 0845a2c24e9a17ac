import { isDuplicateKey } from '@mkt/kit/domain';
import type { ConsultationModels } from './models';

/** `rating_entries`: one entry per review. */
export class RatingRepository {
  constructor(private readonly models: Pick<ConsultationModels, 'RatingEntry'>) {}

  /** The entry of a new review; a repeat (or an entry a visibility change made first) is kept as it is. */
  async add(reviewId: string, consultationId: string, rating: number): Promise<void> {
    try {
      await this.models.RatingEntry.create({ _id: reviewId, consultationId, rating });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }

  /**
   * A review hidden or shown: applied only over an older `sequence` (the rule is the filter); the
   * first change makes the entry.
   */
  async applyVisibility(change: { reviewId: string; consultationId: string; rating: number; isActive: boolean; sequence: number }) {
    const { reviewId, consultationId, rating, isActive, sequence } = change;
    try {
      await this.models.RatingEntry.updateOne(
        { _id: reviewId, $or: [{ visibilitySequence: null }, { visibilitySequence: { $lt: sequence } }] },
        { $set: { isActive, visibilitySequence: sequence }, $setOnInsert: { consultationId, rating } },
        { upsert: true },
      );
    } catch (err) {
      // The entry exists with this change or a newer one applied: the upsert met its _id.
      if (!isDuplicateKey(err)) throw err;
    }
  }

  /** The ratings of a consultation's active reviews (a hidden review's entry stays, out of these). */
  async activeRatings(consultationId: string): Promise<number[]> {
    const entries = await this.models.RatingEntry.find({ consultationId, isActive: { $ne: false } }, { rating: 1 }).lean();
    return entries.map((entry) => entry.rating);
  }
}
