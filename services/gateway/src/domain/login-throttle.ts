import { createHash } from 'node:crypto';
import { isDuplicateKey, RateLimited } from '@mkt/kit';
import { LoginAccount, LoginAttempt, type LoginAccountDoc } from '../db/login-attempt.model';

export interface ThrottleSettings {
  /** Failures of one account from one address within `windowMs` that lock that address out of it. */
  maxFailuresPerAddress: number;
  /** The per-address window. */
  windowMs: number;
  /** Failures of one account (every address) before its attempts must wait. */
  freeFailuresPerAccount: number;
  /**
   * How long an account's failures are remembered after the last one: long, or a guesser who
   * pauses until they are forgotten gets the free failures and the short waits again.
   */
  accountMemoryMs: number;
  /** The longest wait between two attempts of one lane of an account. */
  maxDelayMs: number;
}

/** Attempts from addresses new to the account, and from addresses that already failed on it. */
export type Lane = 'newAddressesAt' | 'failingAddressesAt';

/** What `begin` counted, for `succeeded` to forgive. */
export interface LoginTicket {
  pairKey: string;
  accountKey: string;
  lane: Lane;
  /** The wait this attempt set on its lane, if any. */
  gate: Date | null;
}

const BASE_DELAY_MS = 1_000;
const MAX_TRIES = 10;

/**
 * How long an account's lane must wait after its `failures`-th failure: nothing for the first
 * `free`, then 1 s, 2 s, 4 s, … doubling up to `maxDelayMs`.
 */
export function delayAfter(failures: number, free: number, maxDelayMs: number): number {
  if (failures <= free) return 0;
  return Math.min(maxDelayMs, BASE_DELAY_MS * 2 ** Math.min(failures - free - 1, 30));
}

/**
 * The failed-login throttle (besides the per-IP limit), in the database so every gateway
 * replica sees the same counts; every guard is one conditional single-document update.
 *
 * - Per account *and* client address: `maxFailuresPerAddress` failures within `windowMs` of the
 *   first lock that address out of that account until the window ends. An attacker's failures
 *   from their address do not touch the owner's address.
 * - Per account across addresses: after `freeFailuresPerAccount` failures (remembered
 *   `accountMemoryMs` after the last), each attempt makes the next one wait `delayAfter` (1 s doubling, capped at
 *   `maxDelayMs`), so online guessing stays slow however many addresses guess. The wait is kept
 *   in two lanes: addresses new to the account, and addresses that already failed on it. An
 *   attacker's failing addresses only push back their own lane; to hold back an owner signing
 *   in from a new address the attacker must spend a new address per wait, and even then the
 *   owner waits at most `maxDelayMs` before an attempt is admitted.
 *
 * Each attempt is counted *before* its password is checked (parallel guesses cannot slip past)
 * and forgiven when it succeeds.
 */
export class LoginThrottle {
  constructor(private readonly settings: ThrottleSettings) {}

  /** Counts one attempt of `email` from `address`, or throws RateLimited when it must wait. */
  async begin(email: string, address: string): Promise<LoginTicket> {
    const accountKey = hashOf(normalized(email));
    const pairKey = hashOf(`${normalized(email)}\n${address}`);
    const wasNew = await this.countForAddress(pairKey);
    const lane: Lane = wasNew ? 'newAddressesAt' : 'failingAddressesAt';
    try {
      return { pairKey, accountKey, lane, gate: await this.countForAccount(accountKey, lane) };
    } catch (err) {
      // Refused before its password was checked: this attempt was no failure of this address.
      await LoginAttempt.updateOne({ _id: pairKey, failures: { $gt: 0 } }, { $inc: { failures: -1 } });
      throw err;
    }
  }

  /** A successful sign-in forgives its address's failures and its own count on the account. */
  async succeeded(ticket: LoginTicket): Promise<void> {
    await LoginAttempt.deleteOne({ _id: ticket.pairKey });
    await LoginAccount.updateOne({ _id: ticket.accountKey, failures: { $gt: 0 } }, { $inc: { failures: -1 } });
    // The wait this attempt set is for guessers, not for whoever comes after the owner.
    if (ticket.gate)
      await LoginAccount.updateOne({ _id: ticket.accountKey, [ticket.lane]: ticket.gate }, { $set: { [ticket.lane]: new Date() } });
  }

  /** Deletes ended windows and forgotten accounts (the development server enforces no TTL index). */
  async deleteEnded(): Promise<number> {
    const now = new Date();
    const pairs = await LoginAttempt.deleteMany({ windowEndsAt: { $lte: now } });
    const accounts = await LoginAccount.deleteMany({ forgetAt: { $lte: now } });
    return pairs.deletedCount + accounts.deletedCount;
  }

  /** Counts the attempt against its address; true when the address had no failure on the account. */
  private async countForAddress(key: string): Promise<boolean> {
    const { maxFailuresPerAddress, windowMs } = this.settings;
    for (let tries = 0; tries < MAX_TRIES; tries += 1) {
      const now = new Date();
      const counted = await LoginAttempt.findOneAndUpdate(
        { _id: key, windowEndsAt: { $gt: now }, failures: { $lt: maxFailuresPerAddress } },
        { $inc: { failures: 1 } },
        { new: true, projection: { failures: 1 } },
      ).lean();
      if (counted) return counted.failures === 1;
      try {
        // No window yet, or an ended one: this attempt opens a new window.
        const opened = await LoginAttempt.updateOne(
          { _id: key, windowEndsAt: { $lte: now } },
          { $set: { failures: 1, windowEndsAt: new Date(now.getTime() + windowMs) } },
          { upsert: true },
        );
        if (opened.matchedCount === 1 || opened.upsertedCount === 1) return true;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const current = await LoginAttempt.findById(key).lean();
      if (current && current.windowEndsAt > now && current.failures >= maxFailuresPerAddress) {
        throw new RateLimited(secondsUntil(current.windowEndsAt, now), 'Too many failed sign-ins; try again later');
      }
    }
    throw new RateLimited(1, 'Too many sign-ins at once; try again shortly');
  }

  /** Counts the attempt against the account in its lane; the wait it set on the lane, if any. */
  private async countForAccount(key: string, lane: Lane): Promise<Date | null> {
    const { accountMemoryMs, freeFailuresPerAccount: free, maxDelayMs } = this.settings;
    for (let tries = 0; tries < MAX_TRIES; tries += 1) {
      const now = new Date();
      const forgetAt = new Date(now.getTime() + Math.max(accountMemoryMs, maxDelayMs));
      // Below the free failures, with the lane open: a plain count.
      const counted = await LoginAccount.updateOne(
        { _id: key, forgetAt: { $gt: now }, failures: { $lt: free }, [lane]: { $lte: now } },
        { $inc: { failures: 1 }, $set: { forgetAt } },
      );
      if (counted.matchedCount === 1) return null;
      try {
        // Nothing remembered (or forgotten by now): this attempt starts the count.
        const opened = await LoginAccount.updateOne(
          { _id: key, forgetAt: { $lte: now } },
          { $set: { failures: 1, forgetAt, newAddressesAt: now, failingAddressesAt: now } },
          { upsert: true },
        );
        if (opened.matchedCount === 1 || opened.upsertedCount === 1) return null;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const current = await LoginAccount.findById(key).lean<LoginAccountDoc>();
      if (!current || current.forgetAt <= now) continue;
      if (current[lane] > now) {
        throw new RateLimited(secondsUntil(current[lane], now), 'Too many failed sign-ins for this account; try again later');
      }
      // Past the free failures: the wait grows with the count, so the update is a compare-and-set
      // on the count read (another attempt in between makes it miss, and this one reads again).
      const failures = current.failures + 1;
      const gate = new Date(now.getTime() + delayAfter(failures, free, maxDelayMs));
      const set = await LoginAccount.updateOne(
        { _id: key, failures: current.failures, forgetAt: current.forgetAt, [lane]: current[lane] },
        { $set: { failures, forgetAt, [lane]: gate } },
      );
      if (set.matchedCount === 1) return gate.getTime() > now.getTime() ? gate : null;
    }
    throw new RateLimited(1, 'Too many sign-ins at once; try again shortly');
  }
}

function normalized(email: string): string {
  return email.trim().toLowerCase();
}

function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function secondsUntil(time: Date, now: Date): number {
  return (time.getTime() - now.getTime()) / 1000;
}
