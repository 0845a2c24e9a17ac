// The rating summary of a consultation, from the review service's events.

/**
 * Whether a review event may touch the rating: a review from a buyer who only had free places
 * (`countsInRating: false`) never does — farmed free bookings cannot lift a consultation's
 * rating. A review starts to count only later (never stops), by a newer visibility change.
 */
export function countsInRating(data: { countsInRating?: boolean }): boolean {
  return data.countsInRating !== false;
}

/** Whether a review is about a consultation (the review service rates other things too). */
export const aboutConsultation = (data: { entityType: string }) => data.entityType === 'consultation_service';

/** `averageRating` (2 decimals; 0 with none) and `totalReviews` over the ratings of active reviews. */
export function ratingSummary(ratings: number[]): { averageRating: number; totalReviews: number } {
  const total = ratings.length;
  const sum = ratings.reduce((acc, rating) => acc + rating, 0);
  return { averageRating: total === 0 ? 0 : Math.round((sum / total) * 100) / 100, totalReviews: total };
}
