import { newInternalId, newUnderscoreReference, type IntegrationEvent } from '@mkt/contracts';
import { isDuplicateKey } from '@mkt/kit';
import { BookingFact, KnownUser, Relationship, type BookingFactDoc } from '../db/crm.models';
import { totalsOf } from './totals';

/** The relationship of a pair, created when events meet a pair nobody created by hand. */
export async function ensureRelationship(sellerId: string, buyerId: string): Promise<void> {
  if (await Relationship.exists({ sellerId, buyerId })) return;
  try {
    await Relationship.create({ _id: newInternalId('cus'), referenceId: newUnderscoreReference('CUS'), sellerId, buyerId });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
}

/** Recomputes a pair's totals from its booking facts (idempotent; also the rebuild). */
export async function recomputeTotals(sellerId: string, buyerId: string): Promise<void> {
  const facts = await BookingFact.find({ sellerId, buyerId }).lean<BookingFactDoc[]>();
  const totals = totalsOf(facts);
  await Relationship.updateOne({ sellerId, buyerId }, { $set: totals });
}

export async function touch(sellerId: string, buyerId: string, at: Date): Promise<void> {
  await Relationship.updateOne({ sellerId, buyerId }, { $max: { lastInteraction: at } });
}

export async function onBookingConfirmed(event: IntegrationEvent<'consultation.booking.confirmed'>): Promise<void> {
  const { bookingId, sellerId, buyerId, totalAmountMinor, consultationCategory } = event.data;
  const at = new Date(event.occurredAt);
  await BookingFact.updateOne(
    { _id: bookingId },
    { $set: { sellerId, buyerId, totalMinor: totalAmountMinor, confirmedAt: at } },
    { upsert: true },
  );
  await ensureRelationship(sellerId, buyerId);
  if (consultationCategory) await Relationship.updateOne({ sellerId, buyerId }, { $set: { sellerCategory: consultationCategory } });
  await recomputeTotals(sellerId, buyerId);
  await touch(sellerId, buyerId, at);
}

export async function onBookingCancelled(event: IntegrationEvent<'consultation.booking.cancelled'>): Promise<void> {
  const { bookingId, sellerId, buyerId, refundAmountMinor } = event.data;
  await BookingFact.updateOne(
    { _id: bookingId },
    { $set: { sellerId, buyerId, refundMinor: refundAmountMinor, cancelledAt: new Date(event.occurredAt) } },
    { upsert: true },
  );
  await ensureRelationship(sellerId, buyerId);
  await recomputeTotals(sellerId, buyerId);
}

export async function onSessionEvent(sellerId: string | undefined, buyerIds: string[], at: Date): Promise<void> {
  if (!sellerId) return;
  for (const buyerId of buyerIds) {
    await ensureRelationship(sellerId, buyerId);
    await touch(sellerId, buyerId, at);
  }
}

export async function onUserRegistered(event: IntegrationEvent<'identity.user.registered'>): Promise<void> {
  const { userId, referenceId, fullName, role } = event.data;
  await KnownUser.updateOne({ _id: userId }, { $set: { referenceId, fullName, role } }, { upsert: true });
}

/** Recomputes every relationship's totals from the stored facts. */
export async function rebuildAll(): Promise<number> {
  const facts = await BookingFact.find({}, { sellerId: 1, buyerId: 1 }).lean<BookingFactDoc[]>();
  const pairs = new Map(facts.map((fact) => [`${fact.sellerId}|${fact.buyerId}`, fact]));
  for (const { sellerId, buyerId } of pairs.values()) {
    await ensureRelationship(sellerId, buyerId);
    await recomputeTotals(sellerId, buyerId);
  }
  return pairs.size;
}
