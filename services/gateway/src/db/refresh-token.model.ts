import mongoose, { Schema } from 'mongoose';

/**
 * Refresh tokens are opaque random strings; only their SHA-256 is stored. Each login starts a
 * family; a refresh uses one token and issues the next of the family. A used token presented
 * again means it was stolen: the whole family is revoked.
 */
export interface RefreshTokenDoc {
  _id: string;
  tokenHash: string;
  familyId: string;
  userId: string;
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
}

const refreshTokenSchema = new Schema<RefreshTokenDoc>(
  {
    _id: { type: String, required: true },
    tokenHash: { type: String, required: true, unique: true },
    familyId: { type: String, required: true, index: true },
    userId: { type: String, required: true },
    expiresAt: { type: Date, required: true, index: true },
    usedAt: { type: Date, default: null },
    revokedAt: { type: Date, default: null },
  },
  { timestamps: { createdAt: true, updatedAt: false }, versionKey: false },
);

export const RefreshToken = mongoose.model<RefreshTokenDoc>('RefreshToken', refreshTokenSchema, 'refresh_tokens');
