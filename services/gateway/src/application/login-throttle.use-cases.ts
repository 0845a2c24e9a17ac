import { Counter, getMetrics } from '@mkt/kit/metrics';
import { RateLimited } from '@mkt/kit/domain';
import type { Logger } from '@mkt/kit/logger';
import type { LoginThrottleRepository } from '../db/login-throttle.repository';
import type { LoginAttemptDoc } from '../domain/records';
import {
  addressRefusal,
  countFree,
  countFreshCheck,
  countInWindow,
  countPastFree,
  deviceThrottleKey,
  failingUntilFrom,
  isNewAddress,
  laneOf,
  MAX_TRIES,
  openWindow,
  startAccountCount,
  throttleKeys,
  tooBusy,
  type Lane,
  type LoginTicket,
  type ThrottleRule,
  type ThrottleSettings,
} from '../domain/login-throttle';

/** A known device presented with a sign-in: a valid device cookie's content. */
export interface KnownDevice {
  accountKey: string;
  deviceId: string;
}

let refusals: Counter<'rule'> | undefined;
/** `marketplace_gateway_login_throttled_total{rule}`: sign-in attempts the throttle refused, by what refused them. */
function refusalCounter(): Counter<'rule'> {
  if (refusals) return refusals;
  refusals = new Counter({
    name: 'marketplace_gateway_login_throttled_total',
    help: 'Sign-in attempts refused by the failed-login throttle, by rule (address, account, device, busy)',
    labelNames: ['rule'],
    registers: [getMetrics().registry],
  });
  for (const rule of ['address', 'account', 'device', 'busy'] as const) refusals.inc({ rule }, 0);
  return refusals;
}

/**
 * The failed-login throttle (besides the per-IP limit), in the database so every gateway
 * replica sees the same counts: the rules are `domain/login-throttle.ts`, every guard one
 * conditional single-document update of the repository, retried on a lost race.
 */
export class LoginThrottle {
  private readonly refused = refusalCounter();

  constructor(
    private readonly settings: ThrottleSettings,
    private readonly records: LoginThrottleRepository,
    private readonly log: Logger,
  ) {}

  /**
   * Counts one attempt of `email` from `address` — or, with a known device for that account, on
   * the device alone — or throws RateLimited when it must wait (counted in the metric).
   */
  async begin(email: string, address: string, device?: KnownDevice | null): Promise<LoginTicket> {
    const { accountKey, pairKey } = throttleKeys(email, address);
    const account = accountKey.slice(0, 12);
    if (device && device.accountKey === accountKey) {
      const key = deviceThrottleKey(device.deviceId);
      await this.refusing('device', account, () => this.countForAddress(key, { account, rule: 'device' }));
      return { kind: 'device', pairKey: key, accountKey, lane: null, gate: null, deviceId: device.deviceId };
    }
    const counted = await this.refusing('address', account, () => this.countForAddress(pairKey, { account, rule: 'address', address }));
    const lane = laneOf(isNewAddress(counted, new Date()));
    try {
      const { gate, freshCheck } = await this.refusing('account', account, () => this.countForAccountOrFresh(accountKey, lane, account));
      if (gate)
        this.log.warn({ account, lane, waitSeconds: Math.ceil((gate.getTime() - Date.now()) / 1000) }, 'sign-ins of an account must wait');
      // Past the gates: until a success forgives it, this address is failing on the account.
      await this.records.markFailing(pairKey, failingUntilFrom(this.settings, new Date()));
      return { kind: 'address', pairKey, accountKey, lane, gate, freshCheck };
    } catch (err) {
      // Refused before its password was checked: this attempt was no failure of this address.
      await this.records.uncountAddress(pairKey);
      throw err;
    }
  }

  /** A successful sign-in forgives its address's (or device's) failures and its own count on the account. */
  async succeeded(ticket: LoginTicket): Promise<void> {
    await this.records.forgive(ticket, new Date());
  }

  /** Deletes ended windows and forgotten accounts (the development server enforces no TTL index). */
  deleteEnded(): Promise<number> {
    return this.records.deleteEnded(new Date());
  }

  /** Runs a gate; a refusal is counted by rule (`busy` when too many raced) and passed on. */
  private async refusing<T>(rule: ThrottleRule, account: string, gate: () => Promise<T>): Promise<T> {
    try {
      return await gate();
    } catch (err) {
      if (err instanceof RateLimited) {
        const busy = err.message === tooBusy().message;
        this.refused.inc({ rule: busy ? 'busy' : rule });
        this.log.debug({ account, rule: busy ? 'busy' : rule }, 'sign-in attempt refused by the throttle');
      }
      throw err;
    }
  }

  /**
   * Counts the attempt against its address (or device) in the open window; its record after
   * counting. Logged when this attempt reaches the lock (the address or device is locked out).
   */
  private async countForAddress(
    key: string,
    about: { account: string; rule: 'address' | 'device'; address?: string },
  ): Promise<LoginAttemptDoc | null> {
    for (let tries = 0; tries < MAX_TRIES; tries += 1) {
      const now = new Date();
      const counted =
        (await this.records.countAddress(key, countInWindow(this.settings, now))) ??
        (await this.records.openAddressWindow(key, openWindow(this.settings, now)));
      if (counted) {
        if (counted.failures === this.settings.maxFailuresPerAddress)
          this.log.warn({ ...about, failures: counted.failures }, `sign-ins of an account locked for this ${about.rule}`);
        return counted;
      }
      const refusal = addressRefusal(await this.records.address(key), this.settings, now);
      if (refusal) throw refusal;
    }
    throw tooBusy();
  }

  /**
   * The account gate: counted in its lane, or — from an address that never failed on the
   * account, while the new-address lane waits — as one of the account's fresh-address checks
   * while some are left (its password is checked; logged: someone keeps that lane shut).
   */
  private async countForAccountOrFresh(key: string, lane: Lane, account: string): Promise<{ gate: Date | null; freshCheck: boolean }> {
    try {
      return { gate: await this.countForAccount(key, lane), freshCheck: false };
    } catch (err) {
      if (!(err instanceof RateLimited) || lane !== 'newAddressesAt') throw err;
      if (!(await this.records.updateAccount(key, countFreshCheck(this.settings, new Date())))) throw err;
      this.log.warn({ account }, 'sign-in from a new address checked while the account waits');
      return { gate: null, freshCheck: true };
    }
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
