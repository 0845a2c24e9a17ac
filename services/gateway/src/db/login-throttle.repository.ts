import type { FilterQuery, Model, UpdateQuery } from 'mongoose';
import { isDuplicateKey } from '@mkt/kit/domain';
import type { Condition, Guarded, Lane, LoginTicket } from '../domain/login-throttle';
import type { LoginAccountDoc, LoginAttemptDoc } from './models';

/** One field's condition as the driver's: `is` the value, `after` `$gt`, `notAfter` `$lte`, `below` `$lt` (`orAbsent`: or no such field). */
function conditionOn(field: string, condition: Condition<unknown>): Record<string, unknown> {
  if ('is' in condition) return { [field]: condition.is };
  if ('after' in condition) return { [field]: { $gt: condition.after } };
  if ('notAfter' in condition) return { [field]: { $lte: condition.notAfter } };
  if (condition.orAbsent) return { $or: [{ [field]: { $exists: false } }, { [field]: { $lt: condition.below } }] };
  return { [field]: { $lt: condition.below } };
}

/** The filter of a guarded write on the record `key`: its id and every condition. */
export function guardedFilter<R>(key: string, rule: Guarded<R>): FilterQuery<R> {
  const conditions = Object.entries<Condition<unknown> | undefined>(rule.expect).flatMap(([field, condition]) =>
    condition ? [conditionOn(field, condition)] : [],
  );
  return Object.assign({ _id: key }, ...conditions);
}

/** The update of a guarded write: the counts moved (`$inc`), the fields set (`$set`). */
export function guardedUpdate<R>(rule: Guarded<R>): UpdateQuery<R> {
  return { ...(rule.add ? { $inc: rule.add } : {}), ...(rule.set ? { $set: rule.set } : {}) };
}

/** Every query of `login_attempts` (per account and address) and `login_accounts` (per account). */
export class LoginThrottleRepository {
  constructor(
    private readonly attempts: Model<LoginAttemptDoc>,
    private readonly accounts: Model<LoginAccountDoc>,
  ) {}

  /** The address's record after the guarded increment, or null when its guard did not match. */
  countAddress(key: string, rule: Guarded<LoginAttemptDoc>): Promise<LoginAttemptDoc | null> {
    return this.attempts
      .findOneAndUpdate(guardedFilter(key, rule), guardedUpdate(rule), { new: true, projection: { failures: 1, failingUntil: 1 } })
      .lean<LoginAttemptDoc>()
      .exec();
  }

  /** Applies a guarded upsert; false when it matched nothing (or a racing upsert made the record first). */
  private async upsert(model: Model<LoginAccountDoc>, key: string, rule: Guarded<LoginAccountDoc>): Promise<boolean> {
    try {
      const done = await model.updateOne(guardedFilter(key, rule), guardedUpdate(rule), { upsert: true });
      return done.matchedCount === 1 || done.upsertedCount === 1;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return false;
    }
  }

  /** Opens the address's window (upserted); its record then, or null when the guard missed (or a racing upsert made it first). */
  async openAddressWindow(key: string, rule: Guarded<LoginAttemptDoc>): Promise<LoginAttemptDoc | null> {
    try {
      return await this.attempts
        .findOneAndUpdate(guardedFilter(key, rule), guardedUpdate(rule), {
          upsert: true,
          new: true,
          projection: { failures: 1, failingUntil: 1 },
        })
        .lean<LoginAttemptDoc>()
        .exec();
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return null;
    }
  }

  /** The attempt passed the gates: its address is failing on the account until `until` (a success deletes the record). */
  async markFailing(key: string, until: Date): Promise<void> {
    await this.attempts.updateOne({ _id: key }, { $max: { failingUntil: until } });
  }

  address(key: string): Promise<LoginAttemptDoc | null> {
    return this.attempts.findById(key).lean<LoginAttemptDoc>().exec();
  }

  /** Refused before its password was checked: the attempt was no failure of its address. */
  async uncountAddress(key: string): Promise<void> {
    await this.attempts.updateOne({ _id: key, failures: { $gt: 0 } }, { $inc: { failures: -1 } });
  }

  async updateAccount(key: string, rule: Guarded<LoginAccountDoc>): Promise<boolean> {
    return (await this.accounts.updateOne(guardedFilter(key, rule), guardedUpdate(rule))).matchedCount === 1;
  }

  startAccount(key: string, rule: Guarded<LoginAccountDoc>): Promise<boolean> {
    return this.upsert(this.accounts, key, rule);
  }

  account(key: string): Promise<LoginAccountDoc | null> {
    return this.accounts.findById(key).lean<LoginAccountDoc>().exec();
  }

  /**
   * A successful sign-in forgives its address's failures and its own count on the account; the
   * wait it set is for guessers, not for whoever comes after the owner (opened again `now`).
   */
  async forgive(ticket: LoginTicket, now: Date): Promise<void> {
    await this.attempts.deleteOne({ _id: ticket.pairKey });
    if (ticket.kind === 'device' || !ticket.lane) return; // a known device was not counted on the account
    await this.accounts.updateOne({ _id: ticket.accountKey, failures: { $gt: 0 } }, { $inc: { failures: -1 } });
    if (ticket.freshCheck)
      await this.accounts.updateOne({ _id: ticket.accountKey, freshChecks: { $gt: 0 } }, { $inc: { freshChecks: -1 } });
    if (ticket.gate) await this.reopenLane(ticket.accountKey, ticket.lane, ticket.gate, now);
  }

  private async reopenLane(key: string, lane: Lane, gate: Date, now: Date): Promise<void> {
    await this.accounts.updateOne({ _id: key, [lane]: gate }, { $set: { [lane]: now } });
  }

  /** Deletes ended windows of addresses no longer failing, and forgotten accounts (the development server enforces no TTL index). */
  async deleteEnded(now: Date): Promise<number> {
    // A record whose window ended is kept while its address is still failing on the account.
    const pairs = await this.attempts.deleteMany({
      windowEndsAt: { $lte: now },
      $or: [{ failingUntil: { $exists: false } }, { failingUntil: { $lte: now } }],
    });
    const accounts = await this.accounts.deleteMany({ forgetAt: { $lte: now } });
    return pairs.deletedCount + accounts.deletedCount;
  }
}
