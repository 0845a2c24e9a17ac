import type { IntegrationEvent } from '@mkt/contracts';
import { BookingFact } from '../db/crm.models';
import { ensureRelationship, recomputeTotals } from '../domain/projection';

/**
 * The wallet's refund of a cancelled paid booking: the amount actually given back replaces the
 * amount asked in the booking's fact (idempotent: a repeat sets the same values).
 */
export async function onBookingRefundCompleted(event: IntegrationEvent<'wallet.booking_refund.completed'>): Promise<void> {
  const { bookingId, sellerId, buyerId, refundAmountMinor } = event.data;
  await BookingFact.updateOne(
    { _id: bookingId },
    { $set: { sellerId, buyerId, refundedMinor: refundAmountMinor, refundedAt: new Date(event.occurredAt) } },
    { upsert: true },
  );
  await ensureRelationship(sellerId, buyerId);
  await recomputeTotals(sellerId, buyerId);
}
