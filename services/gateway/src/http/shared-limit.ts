import { calendarWindow, RateLimited } from '@mkt/kit/domain';
import { withoutTraceContext } from '@mkt/kit/tracing';
import type { Logger } from '@mkt/kit/logger';
import type { WindowedCounter } from '@mkt/kit/db';
import { LimitUnchecked } from '../domain/errors';

// `GET /consultations/{id}/slots`, spelled as the consultation service's router matches it
// (case-sensitive, strict): any other spelling is a 404 there and costs nothing.
const SLOTS_PATH = /^\/consultations\/[^/]+\/slots$/;

/** A request for a consultation's free slots: anonymous and the costliest read behind the gateway. */
export function isSlotsQuery(method: string | undefined, path: string): boolean {
  return (method === 'GET' || method === 'HEAD') && SLOTS_PATH.test(path);
}

export interface LimitHeaders {
  /** The draft-7 `RateLimit-Policy` header value. */
  policy: string;
  /** The draft-7 `RateLimit` header value. */
  value: string;
}

/** A limit's answer for one hit: its headers, and the 429 (or 503) to send when refused. */
export interface LimitOutcome {
  headers: LimitHeaders;
  refused: RateLimited | LimitUnchecked | null;
}

export interface SharedLimitOptions {
  /** Names the limit's counters (`ip`, `user`, `slots`, `register`). */
  name: string;
  /** Hits per key and window. */
  limit: number;
  window: 'minute' | 'hour';
  /**
   * When the database cannot be asked: `allow` lets the hit through (logged) — for limits that
   * protect capacity, where refusing everything would turn a database hiccup into an outage of
   * every route; `refuse` answers 503 — for limits in front of work that needs the database
   * anyway (a registration cannot succeed without it, and must not pass its limit unnoticed).
   */
  whenUnavailable: 'allow' | 'refuse';
}

const WINDOW_SECONDS = { minute: 60, hour: 3600 } as const;
const MAX_LEASE = 16;
/** A key that spends half a lease this soon after its grant is busy: its next lease is asked for ahead. */
const PREFETCH_WITHIN_MS = 1000;

/**
 * `limit` hits per key and calendar window, counted in the gateway's database (kit's
 * WindowedCounter: one guarded upsert per hit), so every replica counts into the same window
 * and the limit holds however many gateways run — an attacker who spreads requests over N
 * replicas gets one budget, not N. Every limit of the gateway is one of these.
 *
 * A replica takes places in small leases (`leaseSize`), and remembers a key found full until
 * its window ends, so a busy client costs one write per lease and one hammering past the limit
 * costs no further writes. The counter's key carries the limit, so a new
 * setting rolled out replica by replica starts a count of its own.
 */
export class SharedLimit {
  private readonly full = new Map<string, number>();
  /** Places taken from the shared counter and not handed out yet, per counter. */
  private readonly leases = new Map<string, { left: number; count: number; endsAt: number; grantedAt: number }>();
  /** The one request to the database per counter in flight; the others wait for its lease. */
  private readonly asking = new Map<string, Promise<'taken' | 'full' | 'unchecked'>>();
  readonly policy: string;
  /** The current window, worked out once per window rather than per request. */
  private window = { key: '', endsAt: new Date(0) };
  /**
   * Places taken from the database at once: 1 % of the limit, at most MAX_LEASE. Then only one
   * request in `leaseSize` of a busy key costs a database write. The budget is never exceeded
   * (a lease is taken only while that many places are free, then one at a time); places a
   * replica leased and did not hand out before the window ends are lost, so a client may be
   * refused up to (replicas × (leaseSize − 1)) hits early — under 2 % of the limit with two
   * replicas. Limits under 200 are counted exactly, one write per hit.
   */
  readonly leaseSize: number;

  constructor(
    private readonly options: SharedLimitOptions,
    private readonly counter: WindowedCounter,
    private readonly log: Logger,
    /** Whether the gateway's database is connected (not: the limit is not checked, no wait for a server). */
    private readonly databaseReady: () => boolean,
    private readonly maxRemembered = 10_000,
  ) {
    this.policy = `${options.limit};w=${WINDOW_SECONDS[options.window]}`;
    this.leaseSize = Math.min(MAX_LEASE, Math.max(1, Math.floor(options.limit / 100)));
  }

  /**
   * Counts one hit of `key`: the headers to send and, when the window's hits are used up, the
   * refusal. Decided at once (no promise, no turn of the event loop) when this replica holds a
   * lease of the key's places or knows the key full — a busy client's usual case; a promise when
   * the database must be asked.
   */
  take(key: string, now = new Date()): LimitOutcome | Promise<LimitOutcome> {
    const at = now.getTime();
    if (at >= this.window.endsAt.getTime()) this.window = calendarWindow(this.options.window, now);
    const id = `${this.options.name}:${this.options.limit}:${key}:${this.window.key}`;
    const { endsAt } = this.window;
    return this.takeNow(id, endsAt, at) ?? this.takeAsking(id, endsAt, at);
  }

  /** The hit decided from this replica's lease or its memory of a full key; undefined: ask the database. */
  private takeNow(id: string, endsAt: Date, at: number): LimitOutcome | undefined {
    const lease = this.leases.get(id);
    if (lease && lease.left > 0) {
      lease.left -= 1;
      // A busy key (half a lease spent within PREFETCH_WITHIN_MS of its grant) asks for the next
      // lease while half of this one is left, so its requests do not queue behind the database;
      // a quiet key asks when its lease is spent — a write it may never need is not made.
      if (this.leaseSize > 1 && lease.left <= this.leaseSize / 2 && at - lease.grantedAt < PREFETCH_WITHIN_MS) this.ask(id, endsAt, at);
      return this.answer(lease.count - lease.left, endsAt, at);
    }
    if ((this.full.get(id) ?? 0) > at) return this.answer(null, endsAt, at);
    return undefined;
  }

  private async takeAsking(id: string, endsAt: Date, at: number): Promise<LimitOutcome> {
    for (;;) {
      const asked = await (this.asking.get(id) ?? this.ask(id, endsAt, at));
      if (asked === 'unchecked') return this.answer(0, endsAt, at, this.options.whenUnavailable === 'allow' ? null : new LimitUnchecked());
      const decided = this.takeNow(id, endsAt, at);
      if (decided) return decided;
    }
  }

  /** The headers for a hit that makes `count` of the window's places taken (null: none left, refused). */
  private answer(count: number | null, endsAt: Date, at: number, refused: LimitOutcome['refused'] = null): LimitOutcome {
    const { limit } = this.options;
    const reset = Math.max(1, Math.ceil((endsAt.getTime() - at) / 1000));
    return {
      headers: {
        policy: this.policy,
        value: `limit=${limit}, remaining=${count === null ? 0 : Math.max(0, limit - count)}, reset=${reset}`,
      },
      refused: refused ?? (count === null ? new RateLimited(reset) : null),
    };
  }

  /** The request for a lease of `id` in flight, or a new one. */
  private ask(id: string, endsAt: Date, now: number): Promise<'taken' | 'full' | 'unchecked'> {
    const pending = this.asking.get(id);
    if (pending) return pending;
    // A lease serves many requests: its write is in none of their traces.
    const asked = withoutTraceContext(() => this.lease(id, endsAt, now)).finally(() => this.asking.delete(id));
    this.asking.set(id, asked);
    return asked;
  }

  /** Takes a lease of places from the database (one at a time near the limit). */
  private async lease(id: string, endsAt: Date, now: number): Promise<'taken' | 'full' | 'unchecked'> {
    let places = this.leaseSize;
    let count: number | null;
    try {
      // Not connected: no wait for a server selection on every request.
      if (!this.databaseReady()) throw new Error('database not connected');
      // Sent with the other leases asked in this turn (a crowd of new clients: one bulk write).
      count = await this.counter.takeSoon(id, this.options.limit, endsAt, places);
      if (count === null && places > 1) {
        places = 1;
        count = await this.counter.takeCounting(id, this.options.limit, endsAt, places);
      }
    } catch (err) {
      this.log.warn({ err, limit: this.options.name }, 'shared rate limit not checked');
      return 'unchecked';
    }
    if (this.full.size >= this.maxRemembered || this.leases.size >= this.maxRemembered) this.forgetEnded(now);
    if (count === null) {
      this.full.set(id, endsAt.getTime());
      return 'full';
    }
    const lease = this.leases.get(id);
    if (lease) {
      lease.left += places;
      lease.count = count;
      lease.grantedAt = now;
    } else this.leases.set(id, { left: places, count, endsAt: endsAt.getTime(), grantedAt: now });
    return 'taken';
  }

  private forgetEnded(now: number): void {
    for (const [id, endsAt] of this.full) if (endsAt <= now) this.full.delete(id);
    for (const [id, lease] of this.leases) if (lease.endsAt <= now) this.leases.delete(id);
    if (this.full.size >= this.maxRemembered) this.full.clear();
    if (this.leases.size >= this.maxRemembered) this.leases.clear();
  }
}
