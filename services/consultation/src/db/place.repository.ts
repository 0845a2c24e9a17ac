import type { Model } from 'mongoose';
import { isDuplicateKey } from '@mkt/kit/domain';
import type { PlaceDoc } from '../domain/records';
import { collectionOf } from './collections';
import type { ConsultationModels } from './models';

export type PlaceCounter = 'slot' | 'day';

/**
 * `slot_places` and `day_places`: the place counters. Taking is one guarded upsert (the rule in
 * the filter), releasing one guarded update (the booking's id in the filter): safe to repeat,
 * race-free across instances, never a read followed by a write.
 */
export class PlaceRepository {
  constructor(private readonly models: Pick<ConsultationModels, 'SlotPlace' | 'DayPlace'>) {}

  private model(counter: PlaceCounter): Model<PlaceDoc> {
    return counter === 'slot' ? this.models.SlotPlace : this.models.DayPlace;
  }

  /**
   * Takes `places` of a counter for a booking, if it holds at most `bookedAtMost` (the rule of
   * `domain/places.ts`): the guard is in the filter, the counter is created
   * on first use, and when it is full (or closed) the upsert collides with the existing document
   * (duplicate _id) — no read-then-write anywhere. False when there is no room. A booking asks
   * once, under an id of its own, so a collision never hides a place it already holds (no read
   * to check); should it ever, its undo gives that place back all the same (`bookingIds` guard).
   */
  async take(
    counter: PlaceCounter,
    key: string,
    consultationId: string,
    bookingId: string,
    places: number,
    bookedAtMost: number,
  ): Promise<boolean> {
    try {
      // The driver's own write: no casting of what the service computed.
      await collectionOf(this.model(counter)).findOneAndUpdate(
        { _id: key, booked: { $lte: bookedAtMost }, bookingIds: { $ne: bookingId }, closed: { $ne: true } },
        { $inc: { booked: places }, $push: { bookingIds: bookingId }, $setOnInsert: { consultationId, closed: false } },
        { upsert: true, projection: { _id: 1 } },
      );
      return true;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return false;
    }
  }

  /** Gives a booking's places back, once (only while the counter still lists the booking). */
  async release(counter: PlaceCounter, key: string, bookingId: string, places: number): Promise<void> {
    await collectionOf(this.model(counter)).updateOne(
      { _id: key, bookingIds: bookingId },
      { $inc: { booked: -places }, $pull: { bookingIds: bookingId } },
    );
  }

  /**
   * Closes a slot for good once its session has left Scheduled: from here `take` refuses it (a
   * closed counter does not match and the upsert collides with it). Written before the session
   * moves, so a booking that takes a place after the move cannot exist; one that took it just
   * before finds the session no longer Scheduled and is refused there (`joinSession`).
   */
  async closeSlot(key: string, consultationId: string): Promise<void> {
    const model = this.models.SlotPlace;
    try {
      await model.updateOne({ _id: key }, { $set: { closed: true }, $setOnInsert: { consultationId } }, { upsert: true });
    } catch (err) {
      // A booking created the counter between our match and our insert: now it exists.
      if (!isDuplicateKey(err)) throw err;
      await model.updateOne({ _id: key }, { $set: { closed: true } });
    }
  }

  /**
   * Places booked per slot start (ISO) and per local day of listed slots: one range query on the
   * counters' keys each (`<consultation>|<ISO start>`, `<consultation>|<date>`, which sort as
   * their times), not a key per slot — only the counters of the asked range are read.
   */
  async takenBetween(
    consultationId: string,
    slots: Array<{ day: string; startsAt: string }>,
  ): Promise<{ slots: PlaceDoc[]; days: PlaceDoc[] }> {
    if (slots.length === 0) return { slots: [], days: [] };
    const days = slots.map((slot) => slot.day).sort();
    const range = (first: string, last: string) => ({ _id: { $gte: `${consultationId}|${first}`, $lte: `${consultationId}|${last}` } });
    const [places, dayPlaces] = await Promise.all([
      this.models.SlotPlace.find(range(slots[0]!.startsAt, slots.at(-1)!.startsAt), { booked: 1, closed: 1 }).lean(),
      this.models.DayPlace.find(range(days[0]!, days.at(-1)!), { booked: 1 }).lean(),
    ]);
    return { slots: places, days: dayPlaces };
  }
}
