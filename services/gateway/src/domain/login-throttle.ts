import { createHash } from 'node:crypto';
import { RateLimited } from '@mkt/kit/domain';

/**
 * The failed-login throttle's rules, pure (the application loops over them, the repository
 * applies each as one conditional single-document update, `db/login-throttle.repository.ts`):
 *
 * - Per account *and* client address: `maxFailuresPerAddress` failures within `windowMs` of the
 *   first lock that address out of that account until the window ends. An attacker's failures
 *   from their address do not touch the owner's address.
 * - Per account across addresses: after `freeFailuresPerAccount` failures (remembered
 *   `accountMemoryMs` after the last), each attempt makes the next one wait `delayAfter` (1 s
 *   doubling, capped at `maxDelayMs`), so online guessing stays slow however many addresses
 *   guess. The wait is kept in two lanes: addresses new to the account, and addresses that
 *   already failed on it. An attacker's failing addresses only push back their own lane; to
 *   hold back an owner signing in from a new address the attacker must spend a new address per
 *   wait, and even then the owner waits at most `maxDelayMs` before an attempt is admitted.
 *
 *   An address is *failing* on the account once one of its attempts passed the gates (and was
 *   not forgiven by a success), and stays so for `accountMemoryMs` — past its own window, and
 *   however many of its later attempts are refused — so a handful of attacking addresses
 *   cannot pass for new ones and hold the owner's lane shut.
 * - An address that never failed on the account, refused by the waiting new-address lane, has
 *   its password checked anyway while the account has `freshAddressChecks` left (counted as a
 *   failure, given back by a success): an attacker spending a new address per wait cannot keep
 *   the owner's new address out until they have spent that many on the account.
 * - A known device (a valid device cookie for the account, issued at a successful sign-in) is
 *   throttled on its own count only: `maxFailuresPerAddress` failures within `windowMs` lock
 *   that device cookie, never the account. The owner's browser gets in whatever others guess.
 *
 * Each attempt is counted *before* its password is checked (parallel guesses cannot slip past)
 * and forgiven when it succeeds.
 */
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
  /**
   * Attempts from addresses that never failed on the account whose password is checked even
   * while the new-address lane waits, per account while its failures are remembered.
   */
  freshAddressChecks: number;
}

/** Attempts from addresses new to the account, and from addresses that already failed on it. */
export type Lane = 'newAddressesAt' | 'failingAddressesAt';

/** What refused an attempt (the `rule` label of `marketplace_gateway_login_throttled_total`). */
export type ThrottleRule = 'address' | 'account' | 'device' | 'busy';

/** What `begin` counted, for `succeeded` to forgive. */
export interface LoginTicket {
  /** `device`: counted on a known device's own record only (`pairKey` is the device's key). */
  kind: 'address' | 'device';
  pairKey: string;
  accountKey: string;
  /** The account lane counted on (null for a known device: no account count). */
  lane: Lane | null;
  /** The wait this attempt set on its lane, if any. */
  gate: Date | null;
  /** Admitted past a waiting new-address lane as a fresh address's check (`countFreshCheck`). */
  freshCheck?: boolean;
  /** The device id of the cookie presented (kept when the cookie is issued again). */
  deviceId?: string;
}

/**
 * What a guarded write expects of one field of the record: equal to a value (`is`), later than
 * a time (`after`), not later than it (`notAfter`, a missing record's upsert included), or a
 * count below a limit (`below`; `orAbsent`: a missing field counts as below — one such field per
 * write).
 */
export type Condition<V> = { is: V } | { after: V } | { notAfter: V } | { below: V; orAbsent?: true };

/**
 * A guarded write of a throttle record: the rule in `expect` (every condition holds, else it
 * changes nothing), the change in `add` (counts moved by) and `set` (fields written).
 */
export interface Guarded<R> {
  expect: { [K in keyof R]?: Condition<R[K]> };
  add?: { [K in keyof R]?: number };
  set?: Partial<R>;
}

/** A client address's record of failures on an account (or a known device's). */
export interface AddressState {
  failures: number;
  windowEndsAt: Date;
}

/** A lane's field, in a record of the account's. */
const inLane = <V>(lane: Lane, value: V): { newAddressesAt?: V; failingAddressesAt?: V } =>
  lane === 'newAddressesAt' ? { newAddressesAt: value } : { failingAddressesAt: value };

const BASE_DELAY_MS = 1_000;
/** Attempts of one compare-and-set loop before the sign-in is refused as too busy. */
export const MAX_TRIES = 10;

/**
 * How long an account's lane must wait after its `failures`-th failure: nothing for the first
 * `free`, then 1 s, 2 s, 4 s, … doubling up to `maxDelayMs`.
 */
export function delayAfter(failures: number, free: number, maxDelayMs: number): number {
  if (failures <= free) return 0;
  return Math.min(maxDelayMs, BASE_DELAY_MS * 2 ** Math.min(failures - free - 1, 30));
}

/**
 * The records an attempt counts on: the account (SHA-256 of the lower-cased email) and the
 * account with the client address — whether an account has that email or not, so the throttle
 * says nothing about which emails exist.
 */
export function throttleKeys(email: string, address: string): { accountKey: string; pairKey: string } {
  const normalized = email.trim().toLowerCase();
  return { accountKey: hashOf(normalized), pairKey: hashOf(`${normalized}\n${address}`) };
}

/** The record a known device is counted on (its id hashed, apart from every account-and-address key). */
export function deviceThrottleKey(deviceId: string): string {
  return hashOf(`device\n${deviceId}`);
}

/** The lane of an attempt: whether its address had no failure on the account yet. */
export const laneOf = (addressWasNew: boolean): Lane => (addressWasNew ? 'newAddressesAt' : 'failingAddressesAt');

/** An address that passed the gates on the account is failing on it until then (unless a success forgives it). */
export const failingUntilFrom = (settings: ThrottleSettings, now: Date) =>
  new Date(now.getTime() + Math.max(settings.accountMemoryMs, settings.windowMs));

/** Whether an address (as its record reads after counting this attempt) is new to the account: it never got past the gates. */
export const isNewAddress = (record: { failingUntil?: Date | null } | null, now: Date): boolean =>
  !record?.failingUntil || record.failingUntil <= now;

/** Counts an attempt in its address's open window, while it is under the limit. */
export function countInWindow(settings: ThrottleSettings, now: Date): Guarded<AddressState> {
  return { expect: { windowEndsAt: { after: now }, failures: { below: settings.maxFailuresPerAddress } }, add: { failures: 1 } };
}

/** No window yet, or an ended one: this attempt opens a new window (upserted). */
export function openWindow(settings: ThrottleSettings, now: Date): Guarded<AddressState> {
  return {
    expect: { windowEndsAt: { notAfter: now } },
    set: { failures: 1, windowEndsAt: new Date(now.getTime() + settings.windowMs) },
  };
}

/** The address is locked out of the account until its window ends: the refusal, else null (try again). */
export function addressRefusal(current: { failures: number; windowEndsAt: Date } | null, settings: ThrottleSettings, now: Date) {
  if (current && current.windowEndsAt > now && current.failures >= settings.maxFailuresPerAddress)
    return new RateLimited(secondsUntil(current.windowEndsAt, now), 'Too many failed sign-ins; try again later');
  return null;
}

/** How long the account's failures are remembered from `now`. */
const forgetAtFrom = (settings: ThrottleSettings, now: Date) =>
  new Date(now.getTime() + Math.max(settings.accountMemoryMs, settings.maxDelayMs));

/** Below the free failures, with the lane open: a plain count. */
export function countFree(settings: ThrottleSettings, lane: Lane, now: Date): Guarded<AccountState> {
  return {
    expect: { forgetAt: { after: now }, failures: { below: settings.freeFailuresPerAccount }, ...inLane(lane, { notAfter: now }) },
    add: { failures: 1 },
    set: { forgetAt: forgetAtFrom(settings, now) },
  };
}

/** Nothing remembered (or forgotten by now): this attempt starts the count (upserted). */
export function startAccountCount(settings: ThrottleSettings, now: Date): Guarded<AccountState> {
  return {
    expect: { forgetAt: { notAfter: now } },
    set: { failures: 1, forgetAt: forgetAtFrom(settings, now), newAddressesAt: now, failingAddressesAt: now, freshChecks: 0 },
  };
}

/**
 * An attempt from an address that never failed on the account, refused by the new-address
 * lane: its password is checked anyway while the account has fresh-address checks left — so
 * attackers who spend a new address per wait cannot keep the owner out — counted as a failure
 * (a success gives both back). Each such check costs the attacker an address for good: it is
 * failing on the account from then on.
 */
export function countFreshCheck(settings: ThrottleSettings, now: Date): Guarded<AccountState> {
  return {
    expect: { forgetAt: { after: now }, freshChecks: { below: settings.freshAddressChecks, orAbsent: true } },
    add: { failures: 1, freshChecks: 1 },
    set: { forgetAt: forgetAtFrom(settings, now) },
  };
}

export interface AccountState {
  failures: number;
  /** Fresh-address checks made while failures are remembered (absent: none). */
  freshChecks?: number;
  forgetAt: Date;
  newAddressesAt: Date;
  failingAddressesAt: Date;
}

/**
 * Past the free counts (or racing): with the account as read, the attempt is refused (its lane
 * must wait), read again (`retry`: forgotten meanwhile), or counted by a compare-and-set on the
 * count read, which sets the lane's next wait (`gate`, null when none).
 */
export function countPastFree(
  current: AccountState | null,
  settings: ThrottleSettings,
  lane: Lane,
  now: Date,
): { refusal: RateLimited } | 'retry' | (Guarded<AccountState> & { gate: Date | null }) {
  if (!current || current.forgetAt <= now) return 'retry';
  if (current[lane] > now) {
    return { refusal: new RateLimited(secondsUntil(current[lane], now), 'Too many failed sign-ins for this account; try again later') };
  }
  // The wait grows with the count, so the update is a compare-and-set on the count read
  // (another attempt in between makes it miss, and this one reads again).
  const failures = current.failures + 1;
  const gate = new Date(now.getTime() + delayAfter(failures, settings.freeFailuresPerAccount, settings.maxDelayMs));
  return {
    expect: { failures: { is: current.failures }, forgetAt: { is: current.forgetAt }, ...inLane(lane, { is: current[lane] }) },
    set: { failures, forgetAt: forgetAtFrom(settings, now), ...inLane(lane, gate) },
    gate: gate.getTime() > now.getTime() ? gate : null,
  };
}

/** Too many attempts raced for one record: refused, to be tried again shortly. */
export const tooBusy = () => new RateLimited(1, 'Too many sign-ins at once; try again shortly');

function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function secondsUntil(time: Date, now: Date): number {
  return (time.getTime() - now.getTime()) / 1000;
}
