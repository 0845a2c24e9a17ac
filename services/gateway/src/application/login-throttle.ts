import type { LoginThrottleRepository } from '../db/login-throttle.repository';
import {
  addressRefusal,
  countFree,
  countInWindow,
  countPastFree,
  laneOf,
  MAX_TRIES,
  openWindow,
  startAccountCount,
  throttleKeys,
  tooBusy,
  type Lane,
  type LoginTicket,
  type ThrottleSettings,
} from '../domain/login-throttle';

/**
 * The failed-login throttle (besides the per-IP limit), in the database so every gateway
 * replica sees the same counts: the rules are `domain/login-throttle.ts`, every guard one
 * conditional single-document update of the repository, retried on a lost race.
 */
export class LoginThrottle {
  constructor(
    private readonly settings: ThrottleSettings,
    private readonly records: LoginThrottleRepository,
  ) {}

  /** Counts one attempt of `email` from `address`, or throws RateLimited when it must wait. */
  async begin(email: string, address: string): Promise<LoginTicket> {
    const { accountKey, pairKey } = throttleKeys(email, address);
    const lane = laneOf(await this.countForAddress(pairKey));
    try {
      return { pairKey, accountKey, lane, gate: await this.countForAccount(accountKey, lane) };
    } catch (err) {
      // Refused before its password was checked: this attempt was no failure of this address.
      await this.records.uncountAddress(pairKey);
      throw err;
    }
  }

  /** A successful sign-in forgives its address's failures and its own count on the account. */
  async succeeded(ticket: LoginTicket): Promise<void> {
    await this.records.forgive(ticket, new Date());
  }

  /** Deletes ended windows and forgotten accounts (the development server enforces no TTL index). */
  deleteEnded(): Promise<number> {
    return this.records.deleteEnded(new Date());
  }

  /** Counts the attempt against its address; true when the address had no failure on the account. */
  private async countForAddress(key: string): Promise<boolean> {
    for (let tries = 0; tries < MAX_TRIES; tries += 1) {
      const now = new Date();
      const counted = await this.records.countAddress(key, countInWindow(this.settings, now));
      if (counted !== null) return counted === 1;
      if (await this.records.openAddressWindow(key, openWindow(this.settings, now))) return true;
      const refusal = addressRefusal(await this.records.address(key), this.settings, now);
      if (refusal) throw refusal;
    }
    throw tooBusy();
  }

  /** Counts the attempt against the account in its lane; the wait it set on the lane, if any. */
  private async countForAccount(key: string, lane: Lane): Promise<Date | null> {
    for (let tries = 0; tries < MAX_TRIES; tries += 1) {
      const now = new Date();
      if (await this.records.updateAccount(key, countFree(this.settings, lane, now))) return null;
      if (await this.records.startAccount(key, startAccountCount(this.settings, now))) return null;
      const next = countPastFree(await this.records.account(key), this.settings, lane, now);
      if (next === 'retry') continue;
      if ('refusal' in next) throw next.refusal;
      if (await this.records.updateAccount(key, next)) return next.gate;
    }
    throw tooBusy();
  }
}
