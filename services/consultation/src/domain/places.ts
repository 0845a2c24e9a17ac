import type { Model } from 'mongoose';
import { isDuplicateKey } from '@mkt/kit';
import type { PlaceDoc } from '../db/booking.models';
import { Discount } from '../db/setup.models';

/**
 * Takes `places` of a capacity counter for a booking: the guard is in the filter, the counter
 * is created on first use, and when it is full the upsert collides with the existing document
 * (duplicate _id) — no read-then-write anywhere. False when there is no room. A booking asks
 * once, under an id of its own, so a collision never hides a place it already holds (no read
 * to check); should it ever, its undo gives that place back all the same (`bookingIds` guard).
 */
export async function takePlaces(
  model: Model<PlaceDoc>,
  key: string,
  consultationId: string,
  bookingId: string,
  places: number,
  capacity: number,
): Promise<boolean> {
  if (places > capacity) return false;
  try {
    await model.findOneAndUpdate(
      { _id: key, booked: { $lte: capacity - places }, bookingIds: { $ne: bookingId }, closed: { $ne: true } },
      { $inc: { booked: places }, $push: { bookingIds: bookingId }, $setOnInsert: { consultationId } },
      { upsert: true },
    );
    return true;
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    return false;
  }
}

/**
 * Closes a slot for good once its session has left Scheduled: from here `takePlaces` refuses it
 * (a closed counter does not match and the upsert collides with it). Written before the session
 * moves, so a booking that takes a place after the move cannot exist; one that took it just
 * before finds the session no longer Scheduled and is refused there (`joinSession`).
 */
export async function closeSlot(model: Model<PlaceDoc>, key: string, consultationId: string): Promise<void> {
  try {
    await model.updateOne({ _id: key }, { $set: { closed: true }, $setOnInsert: { consultationId } }, { upsert: true });
  } catch (err) {
    // A booking created the counter between our match and our insert: now it exists.
    if (!isDuplicateKey(err)) throw err;
    await model.updateOne({ _id: key }, { $set: { closed: true } });
  }
}

/** Gives a booking's places back, once (only while the counter still lists the booking). */
export async function releasePlaces(model: Model<PlaceDoc>, key: string, bookingId: string, places: number): Promise<void> {
  await model.updateOne({ _id: key, bookingIds: bookingId }, { $inc: { booked: -places }, $pull: { bookingIds: bookingId } });
}

/** Takes one use of a coupon for a booking (asked once, as `takePlaces`); false when it is used up. */
export async function takeCouponUse(discountId: string, maxUses: number, bookingId: string): Promise<boolean> {
  const { modifiedCount } = await Discount.updateOne(
    { _id: discountId, usedBy: { $ne: bookingId }, uses: { $lt: maxUses } },
    { $inc: { uses: 1 }, $push: { usedBy: bookingId } },
  );
  return modifiedCount === 1;
}

export async function releaseCouponUse(discountId: string, bookingId: string): Promise<void> {
  await Discount.updateOne({ _id: discountId, usedBy: bookingId }, { $inc: { uses: -1 }, $pull: { usedBy: bookingId } });
}
