import { createHash } from 'node:crypto';
import { isDuplicateKey, RateLimited } from '@mkt/kit';
import { LoginAttempt } from '../db/login-attempt.model';

export interface ThrottleSettings {
  maxFailures: number;
  windowMs: number;
}

/**
 * Per-account failed-login throttle (besides the per-IP limit): `maxFailures` failures within
 * `windowMs` of the first one lock the account name until the window ends (429 with
 * Retry-After). Each attempt is counted *before* its password is checked and forgiven when it
 * succeeds, so 30 parallel guesses cannot all slip in before the first failure is written; a
 * success clears the count. Kept in the database: every gateway replica sees the same count.
 * Not kit's WindowedCounter: that one's key names a calendar window, so a window never has to
 * be reset; here the window starts at the first failure under a fixed key, and an ended window
 * is reopened in place (a second guarded write), its end read back for Retry-After.
 */
export class LoginThrottle {
  constructor(private readonly settings: ThrottleSettings) {}

  /** Counts one attempt of `email`, or throws RateLimited when the account name is locked. */
  async begin(email: string): Promise<void> {
    const key = accountKey(email);
    for (let tries = 0; tries < 3; tries += 1) {
      const now = new Date();
      const counted = await LoginAttempt.updateOne(
        { _id: key, windowEndsAt: { $gt: now }, failures: { $lt: this.settings.maxFailures } },
        { $inc: { failures: 1 } },
      );
      if (counted.matchedCount === 1) return;
      try {
        // No window yet, or an ended one: this attempt opens a new window.
        const opened = await LoginAttempt.updateOne(
          { _id: key, windowEndsAt: { $lte: now } },
          { $set: { failures: 1, windowEndsAt: new Date(now.getTime() + this.settings.windowMs) } },
          { upsert: true },
        );
        if (opened.matchedCount === 1 || opened.upsertedCount === 1) return;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const current = await LoginAttempt.findById(key).lean();
      if (current && current.windowEndsAt > now && current.failures >= this.settings.maxFailures) {
        throw new RateLimited((current.windowEndsAt.getTime() - now.getTime()) / 1000, 'Too many failed sign-ins; try again later');
      }
    }
    throw new RateLimited(1, 'Too many sign-ins at once; try again shortly');
  }

  /** A successful sign-in forgives the account name's failures. */
  async succeeded(email: string): Promise<void> {
    await LoginAttempt.deleteOne({ _id: accountKey(email) });
  }

  /** Deletes ended windows (the development server enforces no TTL index). */
  async deleteEnded(): Promise<number> {
    const { deletedCount } = await LoginAttempt.deleteMany({ windowEndsAt: { $lte: new Date() } });
    return deletedCount;
  }
}

function accountKey(email: string): string {
  return createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
}
