import type { IntegrationEvent } from '@mkt/contracts/crm';
import type { BookingFact, KnownUser, Pair } from './records';

/** The fields one event brings to its booking's fact (set, the fact made if missing: a repeat sets the same). */
export interface FactChange {
  bookingId: string;
  set: Pair & Partial<Omit<BookingFact, '_id' | 'sellerId' | 'buyerId'>>;
}

/**
 * What one event changes in the projection, applied in this order: the booking's fact; the
 * pairs' relationships made where none exists (Active, New); the seller's category; the pair's
 * totals recomputed from its facts; `lastInteraction` moved forward (never back) to `interactionAt`.
 */
export interface ProjectionUpdate {
  fact?: FactChange;
  pairs: Pair[];
  sellerCategory?: string;
  recompute: boolean;
  interactionAt?: Date;
}

/** A confirm: the amount paid (for a paid booking, held by the wallet), counted from now; an interaction. */
export function onBookingConfirmed(event: IntegrationEvent<'consultation.booking.confirmed'>): ProjectionUpdate {
  const { bookingId, sellerId, buyerId, totalAmountMinor, consultationCategory } = event.data;
  const at = new Date(event.occurredAt);
  return {
    fact: { bookingId, set: { sellerId, buyerId, totalMinor: totalAmountMinor, confirmedAt: at } },
    pairs: [{ sellerId, buyerId }],
    ...(consultationCategory ? { sellerCategory: consultationCategory } : {}),
    recompute: true,
    interactionAt: at,
  };
}

/** A cancel: the booking stops counting, and the refund asked comes off until the wallet's word. */
export function onBookingCancelled(event: IntegrationEvent<'consultation.booking.cancelled'>): ProjectionUpdate {
  const { bookingId, sellerId, buyerId, refundAmountMinor } = event.data;
  return {
    fact: { bookingId, set: { sellerId, buyerId, refundMinor: refundAmountMinor, cancelledAt: new Date(event.occurredAt) } },
    pairs: [{ sellerId, buyerId }],
    recompute: true,
  };
}

/** The wallet's refund of a cancelled paid booking: the amount actually given back replaces the amount asked. */
export function onBookingRefundCompleted(event: IntegrationEvent<'wallet.booking_refund.completed'>): ProjectionUpdate {
  const { bookingId, sellerId, buyerId, refundAmountMinor } = event.data;
  return {
    fact: { bookingId, set: { sellerId, buyerId, refundedMinor: refundAmountMinor, refundedAt: new Date(event.occurredAt) } },
    pairs: [{ sellerId, buyerId }],
    recompute: true,
  };
}

/** A completed session or a no-show: an interaction of the seller with each buyer (none without a seller). */
export function onSession(sellerId: string | undefined, buyerIds: string[], at: Date): ProjectionUpdate {
  return { pairs: sellerId ? buyerIds.map((buyerId) => ({ sellerId, buyerId })) : [], recompute: false, interactionAt: at };
}

export const onSessionCompleted = (event: IntegrationEvent<'consultation.session.completed'>) =>
  onSession(event.data.sellerId, event.data.buyerIds, new Date(event.data.endedAt));

/** A no-show counts when it was marked (the event's time when it does not say). */
export const onSessionNoShow = (event: IntegrationEvent<'consultation.session.no_show'>) =>
  onSession(event.data.sellerId, event.data.buyerIds, new Date(event.data.markedAt ?? event.occurredAt));

/** Names and roles, for the listings and for who may be named as a customer. */
export function onUserRegistered(event: IntegrationEvent<'identity.user.registered'>): KnownUser {
  const { userId, referenceId, fullName, role } = event.data;
  return { _id: userId, referenceId, fullName, role };
}

/** Each pair of the facts once (the rebuild recomputes each). */
export function pairsOf(facts: Pair[]): Pair[] {
  const pairs = new Map(facts.map(({ sellerId, buyerId }) => [`${sellerId}|${buyerId}`, { sellerId, buyerId }]));
  return [...pairs.values()];
}
