import { byIdOrReference } from '@mkt/kit/db';
import type { KnownUser } from '../domain/records';
import type { CrmModels } from './models';

/** Every query of `users` (the projection of `identity.user.registered`). */
export class KnownUserRepository {
  constructor(private readonly models: Pick<CrmModels, 'users'>) {}

  /** A user found by id or USR reference. */
  async find(key: string): Promise<KnownUser | null> {
    return this.models.users.findOne(byIdOrReference(key)).lean<KnownUser>();
  }

  /** Idempotent: a repeat sets the same values. */
  async upsert({ _id, ...fields }: KnownUser): Promise<void> {
    await this.models.users.updateOne({ _id }, { $set: fields }, { upsert: true });
  }

  /** The full names of those of `ids` the CRM knows. */
  async names(ids: string[]): Promise<Map<string, string>> {
    const users = await this.models.users.find({ _id: { $in: ids } }).lean<KnownUser[]>();
    return new Map(users.map((user) => [user._id, user.fullName]));
  }
}
