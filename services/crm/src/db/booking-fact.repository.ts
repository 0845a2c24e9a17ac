import type { FactChange } from '../domain/projection';
import type { BookingFact, Pair } from '../domain/records';
import { collectionOf } from './collections';
import type { CrmModels } from './models';

/** Every query of `booking_facts`. */
export class BookingFactRepository {
  constructor(private readonly models: Pick<CrmModels, 'bookingFacts'>) {}

  /** Merges an event's fields into its booking's fact (upserted; a repeat sets the same values). */
  async merge({ bookingId, set }: FactChange): Promise<void> {
    // The driver's own write: the fields are the projection's, typed, from a checked event.
    await collectionOf(this.models.bookingFacts).updateOne({ _id: bookingId }, { $set: set }, { upsert: true });
  }

  async ofPair({ sellerId, buyerId }: Pair): Promise<BookingFact[]> {
    return collectionOf(this.models.bookingFacts).find({ sellerId, buyerId }).toArray();
  }

  /** Whether the buyer has a confirmed booking with the seller (cancelled since or not). */
  async hasConfirmed({ sellerId, buyerId }: Pair): Promise<boolean> {
    return (await this.models.bookingFacts.exists({ sellerId, buyerId, confirmedAt: { $ne: null } })) !== null;
  }

  /** The pair of every fact (the rebuild). */
  async pairs(): Promise<Pair[]> {
    return this.models.bookingFacts.find({}, { sellerId: 1, buyerId: 1 }).lean<Pair[]>();
  }
}
