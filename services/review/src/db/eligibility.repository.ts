import type { Model } from 'mongoose';
import type { EligibilityRecord } from '../domain/reviews';
import type { EligibilityDoc } from '../domain/records';

/** Every query of `eligibility` (who completed a session of which consultation). */
export class EligibilityRepository {
  constructor(readonly model: Model<EligibilityDoc>) {}

  /** The completed-session record of a buyer for a consultation named by id or reference. */
  of(buyerId: string, consultationKey: string): Promise<EligibilityDoc | null> {
    return this.model
      .findOne({ buyerId, $or: [{ consultationId: consultationKey }, { consultationReferenceId: consultationKey }] })
      .lean<EligibilityDoc>()
      .exec();
  }

  /**
   * The internal id of a consultation named by id or reference. A reference is known here once
   * a session of the consultation was completed by anyone; an unknown key is returned as it is.
   */
  async consultationIdOf(key: string): Promise<string> {
    return (
      (await this.model.findOne({ consultationReferenceId: key }, { consultationId: 1 }).lean<EligibilityDoc>())?.consultationId ?? key
    );
  }

  /** One upsert per consultation and buyer: a repeat changes nothing, a free place never takes back what a paid one gave. */
  async record(record: EligibilityRecord): Promise<void> {
    const { key, consultationId, consultationReferenceId, buyerId, sessionId, paid } = record;
    await this.model.updateOne(
      { _id: key },
      {
        $set: { consultationId, consultationReferenceId, buyerId, ...(paid ? { paid: true } : {}) },
        $addToSet: { sessionIds: sessionId },
        ...(paid ? {} : { $setOnInsert: { paid: false } }),
      },
      { upsert: true },
    );
  }
}
