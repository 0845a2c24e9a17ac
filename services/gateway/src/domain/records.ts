import type { AdminActionRecordedData, IntegrationEvent, Role } from '@mkt/contracts/gateway';

/**
 * The gateway's stored records as the domain and the repositories read them (what `db/models.ts`
 * stores). Plain types: the schemas are typed by them, the decisions take them in.
 */

export interface UserDoc {
  _id: string;
  referenceId: string;
  email: string;
  passwordHash: string;
  fullName: string;
  role: Role;
  createdAt: Date;
  updatedAt: Date;
  pendingEvents: IntegrationEvent[];
}

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

/**
 * Failed sign-ins of one account name from one client address within a fixed window. `_id` is
 * the SHA-256 of the lower-cased email and the address key, whether an account has that email
 * or not, so the throttle says nothing about which emails exist.
 */
export interface LoginAttemptDoc {
  _id: string;
  failures: number;
  windowEndsAt: Date;
  /**
   * Until when the address counts as failing on the account (an attempt of it passed the
   * gates; a success deletes the record). Absent: never did. Also the record of a known device
   * (`_id` the hash of its id), which never has it.
   */
  failingUntil?: Date;
}

/**
 * Failed sign-ins of one account name from every address (`_id`: the SHA-256 of the
 * lower-cased email), forgotten at `forgetAt`, and when each of the two lanes of attempts may
 * next try: addresses new to the account, and addresses that have already failed on it.
 */
export interface LoginAccountDoc {
  _id: string;
  failures: number;
  forgetAt: Date;
  newAddressesAt: Date;
  failingAddressesAt: Date;
  /** Attempts from never-failing addresses checked while the new-address lane waited (absent: none). */
  freshChecks?: number;
}

/** A secret the gateway makes itself, once, shared by every replica (`_id`: its name). */
export interface GatewaySecretDoc {
  _id: string;
  value: string;
  createdAt: Date;
}

/**
 * The audit log of admin actions: one entry per action, appended once (its id is the id of the
 * event the action's own write put in its service's outbox), never changed or removed.
 */
export interface AuditEntry extends Omit<AdminActionRecordedData, 'at'> {
  _id: string;
  at: Date;
  /** The service where the action took effect (the event's publisher). */
  service: string;
  /** When the log received it. */
  recordedAt: Date;
}
