import type { IntegrationEvent } from '@mkt/contracts/gateway';
import { eventsWritten } from '@mkt/kit/bus';
import type { Model } from 'mongoose';
import type { UserDoc } from '../domain/records';

/** Every query of `users`. */
export class UserRepository {
  constructor(readonly model: Model<UserDoc>) {}

  /**
   * Stores a new user with its event (outbox), published right after the insert
   * (`eventsWritten`); a taken email: the unique key refuses it.
   */
  async insert(user: Omit<UserDoc, 'createdAt' | 'updatedAt' | 'pendingEvents'>, event: IntegrationEvent): Promise<UserDoc> {
    const stored = (await this.model.create({ ...user, pendingEvents: [event] })).toObject();
    eventsWritten(this.model, stored._id);
    return stored;
  }

  findByEmail(email: string): Promise<UserDoc | null> {
    return this.model.findOne({ email }).lean<UserDoc>().exec();
  }

  findById(id: string): Promise<UserDoc | null> {
    return this.model.findById(id).lean<UserDoc>().exec();
  }

  async emailTaken(email: string): Promise<boolean> {
    return (await this.model.exists({ email })) !== null;
  }

  /** Replaces the hash only if nobody changed it meanwhile. */
  async replaceHash(user: Pick<UserDoc, '_id' | 'passwordHash'>, passwordHash: string): Promise<void> {
    await this.model.updateOne({ _id: user._id, passwordHash: user.passwordHash }, { $set: { passwordHash } });
  }
}
