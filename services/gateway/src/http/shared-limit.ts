import { calendarWindow, RateLimited, type Logger, type WindowedCounter } from '@mkt/kit';

// `GET /consultations/{id}/slots`, spelled as the consultation service's router matches it
// (case-sensitive, strict): any other spelling is a 404 there and costs nothing.
const SLOTS_PATH = /^\/consultations\/[^/]+\/slots$/;

/** A request for a consultation's free slots: anonymous and the costliest read behind the gateway. */
export function isSlotsQuery(method: string | undefined, path: string): boolean {
  return (method === 'GET' || method === 'HEAD') && SLOTS_PATH.test(path);
}

/**
 * `limit` hits per key and calendar minute, counted in the gateway's database (kit's
 * WindowedCounter: a guarded upsert), so every replica counts into the same window and the
 * limit holds however many gateways run. A key found full is remembered until its window ends,
 * so a client hammering past the limit costs this replica no further database writes.
 */
export class SharedMinuteLimit {
  private readonly full = new Map<string, number>();
  /** The draft-7 `RateLimit-Policy` header value. */
  readonly policy: string;

  constructor(
    private readonly name: string,
    readonly limit: number,
    private readonly counter: WindowedCounter,
    private readonly log: Logger,
    private readonly maxRemembered = 10_000,
  ) {
    this.policy = `${limit};w=60`;
  }

  /**
   * Counts one hit of `key`; a RateLimited to answer when the minute's hits are used up. When
   * the database cannot be asked the hit is let through (logged): the per-IP limit still
   * applies, and a database hiccup should not take the endpoint down with it.
   */
  async take(key: string, now = new Date()): Promise<RateLimited | null> {
    const window = calendarWindow('minute', now);
    const id = `${this.name}:${key}:${window.key}`;
    const refusal = () => new RateLimited((window.endsAt.getTime() - now.getTime()) / 1000);
    if ((this.full.get(id) ?? 0) > now.getTime()) return refusal();
    try {
      if (await this.counter.take(id, this.limit, window.endsAt)) return null;
    } catch (err) {
      this.log.warn({ err, limit: this.name }, 'shared rate limit not checked');
      return null;
    }
    if (this.full.size >= this.maxRemembered) this.forgetEnded(now.getTime());
    this.full.set(id, window.endsAt.getTime());
    return refusal();
  }

  private forgetEnded(now: number): void {
    for (const [id, endsAt] of this.full) if (endsAt <= now) this.full.delete(id);
    if (this.full.size >= this.maxRemembered) this.full.clear();
  }
}
