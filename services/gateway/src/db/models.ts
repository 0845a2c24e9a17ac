import { Schema, type Connection } from 'mongoose';
import { newUuid } from '@mkt/contracts/gateway';
import { pendingEventsField } from '@mkt/kit/bus';
import { windowedCounterSchema, type WindowedCounterDoc } from '@mkt/kit/db';
import type { AuditEntry, GatewaySecretDoc, LoginAccountDoc, LoginAttemptDoc, RefreshTokenDoc, UserDoc } from '../domain/records';

const userSchema = new Schema<UserDoc>(
  {
    _id: { type: String, default: newUuid },
    referenceId: { type: String, required: true, unique: true },
    email: { type: String, required: true, unique: true },
    passwordHash: { type: String, required: true },
    fullName: { type: String, required: true },
    role: { type: String, required: true, enum: ['buyer', 'seller', 'admin'] },
    pendingEvents: pendingEventsField,
  },
  { timestamps: true, versionKey: false },
);

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

const loginAttemptSchema = new Schema<LoginAttemptDoc>(
  {
    _id: { type: String, required: true },
    failures: { type: Number, required: true },
    windowEndsAt: { type: Date, required: true, index: true },
    failingUntil: { type: Date },
  },
  { versionKey: false },
);

const loginAccountSchema = new Schema<LoginAccountDoc>(
  {
    _id: { type: String, required: true },
    failures: { type: Number, required: true },
    forgetAt: { type: Date, required: true, index: true },
    newAddressesAt: { type: Date, required: true },
    failingAddressesAt: { type: Date, required: true },
    freshChecks: { type: Number },
  },
  { versionKey: false },
);

const gatewaySecretSchema = new Schema<GatewaySecretDoc>(
  { _id: String, value: { type: String, required: true }, createdAt: Date },
  { versionKey: false },
);

/**
 * The gateway's models, bound to its connection (no process-global models). `RateLimitCounter`:
 * hits per key and calendar window of the limits every gateway replica must share (kit's
 * WindowedCounter).
 */
/**
 * The audit log of admin actions: append-only (the repository inserts and reads, nothing
 * updates or deletes an entry; no TTL). `_id` is the id of the event that carried the entry.
 */
const auditEntrySchema = new Schema<AuditEntry>(
  {
    _id: { type: String, required: true },
    action: { type: String, required: true },
    actorId: { type: String, required: true },
    actorRole: { type: String, required: true },
    targetType: { type: String, required: true },
    targetId: { type: String, required: true },
    at: { type: Date, required: true },
    requestId: { type: String, required: true },
    clientAddress: { type: String, default: null },
    service: { type: String, required: true },
    before: { type: Schema.Types.Mixed, default: null },
    after: { type: Schema.Types.Mixed, default: null },
    notes: { type: String, default: null },
    recordedAt: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// Newest first, each filter on an index of its own (a read never scans the growing log).
auditEntrySchema.index({ at: -1, _id: -1 });
auditEntrySchema.index({ actorId: 1, at: -1, _id: -1 });
auditEntrySchema.index({ action: 1, at: -1, _id: -1 });
auditEntrySchema.index({ targetId: 1, at: -1, _id: -1 });
auditEntrySchema.index({ targetType: 1, at: -1, _id: -1 });

export function gatewayModels(db: Connection) {
  return {
    User: db.model<UserDoc>('User', userSchema, 'users'),
    RefreshToken: db.model<RefreshTokenDoc>('RefreshToken', refreshTokenSchema, 'refresh_tokens'),
    LoginAttempt: db.model<LoginAttemptDoc>('LoginAttempt', loginAttemptSchema, 'login_attempts'),
    LoginAccount: db.model<LoginAccountDoc>('LoginAccount', loginAccountSchema, 'login_accounts'),
    RateLimitCounter: db.model<WindowedCounterDoc>('RateLimitCounter', windowedCounterSchema(), 'rate_limit_counters'),
    AuditEntry: db.model<AuditEntry>('AuditEntry', auditEntrySchema, 'audit_entries'),
    GatewaySecret: db.model<GatewaySecretDoc>('GatewaySecret', gatewaySecretSchema, 'gateway_secrets'),
  };
}
export type GatewayModels = ReturnType<typeof gatewayModels>;
