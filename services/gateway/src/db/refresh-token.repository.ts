import type { FilterQuery, Model } from 'mongoose';
import type { UsableRefreshToken } from '../domain/identity';
import type { RefreshTokenDoc } from './models';

/** The filter of a token still usable as the domain asks it (`expiresAfter`: `expiresAt > it`). */
export function usableFilter(tokenHash: string, usable: UsableRefreshToken): FilterQuery<RefreshTokenDoc> {
  return { tokenHash, usedAt: usable.usedAt, revokedAt: usable.revokedAt, expiresAt: { $gt: usable.expiresAfter } };
}

/** Every query of `refresh_tokens` (only SHA-256 hashes of the tokens are stored). */
export class RefreshTokenRepository {
  constructor(readonly model: Model<RefreshTokenDoc>) {}

  async insert(record: Pick<RefreshTokenDoc, '_id' | 'tokenHash' | 'familyId' | 'userId' | 'expiresAt'>): Promise<void> {
    await this.model.create(record);
  }

  /** One guarded write: marks the token used if `usable` still holds for it; null when it did not. */
  useOnce(tokenHash: string, usable: UsableRefreshToken, now: Date): Promise<RefreshTokenDoc | null> {
    return this.model
      .findOneAndUpdate(usableFilter(tokenHash, usable), { $set: { usedAt: now } }, { new: true })
      .lean<RefreshTokenDoc>()
      .exec();
  }

  findByHash(tokenHash: string): Promise<RefreshTokenDoc | null> {
    return this.model.findOne({ tokenHash }).lean<RefreshTokenDoc>().exec();
  }

  async revokeFamily(familyId: string, now: Date): Promise<void> {
    await this.model.updateMany({ familyId, revokedAt: null }, { $set: { revokedAt: now } });
  }

  async deleteExpired(now: Date): Promise<number> {
    return (await this.model.deleteMany({ expiresAt: { $lt: now } })).deletedCount;
  }
}
