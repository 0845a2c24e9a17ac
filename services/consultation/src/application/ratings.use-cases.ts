import type { IntegrationEvent } from '@mkt/contracts/consultation';
import type { Logger } from '@mkt/kit/logger';
import { aboutConsultation, countsInRating, ratingSummary } from '../domain/ratings';
import type { ConsultationRepository } from '../db/consultation.repository';
import type { RatingRepository } from '../db/rating.repository';

/** The rating summary of each consultation, kept from the review service's events. */
export class Ratings {
  constructor(
    private readonly consultations: ConsultationRepository,
    private readonly ratings: RatingRepository,
  ) {}

  /**
   * One rating entry per counting review (an entry a visibility change made first is kept as it
   * is); a review that does not count gets none.
   */
  async reviewCreated(data: IntegrationEvent<'review.created'>['data'], log: Logger): Promise<void> {
    if (!countsInRating(data)) return;
    const consultationId = await this.reviewedConsultation(data, log);
    if (!consultationId) return;
    await this.ratings.add(data.reviewId, consultationId, data.rating);
    await this.refresh(consultationId);
  }

  /**
   * A review hidden or shown again: its entry takes `isActive` when the change is newer than the
   * last one applied (`sequence`), so a repeat or a late older change does nothing; the summary is
   * recomputed either way (idempotent). Arriving before `review.created`, it makes the entry. A
   * change of a review that does not count is ignored; the one saying it now counts (its buyer
   * paid since) makes its entry.
   */
  async reviewVisibilityChanged(data: IntegrationEvent<'review.visibility_changed'>['data'], log: Logger): Promise<void> {
    if (!countsInRating(data)) return;
    const consultationId = await this.reviewedConsultation(data, log);
    if (!consultationId) return;
    const { reviewId, rating, isActive, sequence } = data;
    await this.ratings.applyVisibility({ reviewId, consultationId, rating, isActive, sequence });
    await this.refresh(consultationId);
  }

  /** Recomputes the summary from the entries of active reviews; a repeat changes nothing. */
  private async refresh(consultationId: string): Promise<void> {
    await this.consultations.setRating(consultationId, ratingSummary(await this.ratings.activeRatings(consultationId)));
  }

  /** The consultation a review is about, by id or reference; null (logged) when it is not ours. */
  private async reviewedConsultation(data: { entityType: string; entityId: string }, log: Logger): Promise<string | null> {
    if (!aboutConsultation(data)) return null;
    const consultationId = await this.consultations.idOf(data.entityId);
    if (!consultationId) log.warn({ entityId: data.entityId }, 'review of an unknown consultation ignored');
    return consultationId;
  }
}
