import type { RateLimitStats } from '@mkt/contracts/wallet';
import type { WindowedCounter } from '@mkt/kit/db';
import { limitReached, limitStats, periodOf, WINDOWS, type LimitSettings, type LimitWindow } from '../domain/limits';

/**
 * Top-ups and payout requests count against a user's daily, weekly and monthly windows. A
 * place is reserved in all three before the work (atomically, by kit's WindowedCounter over
 * `usage_counters`), and given back when the work fails, so a refused request never counts.
 */
export class Limits {
  constructor(
    private readonly limits: LimitSettings,
    private readonly usage: WindowedCounter,
  ) {}

  async reserve(userId: string, now = new Date()): Promise<() => Promise<void>> {
    const taken: string[] = [];
    const release = async () => {
      for (const key of taken) await this.usage.giveBack(key);
    };
    for (const window of WINDOWS) {
      const period = periodOf(userId, window, now);
      if (!(await this.usage.take(period.key, this.limits[window], period.endsAt))) {
        await release();
        throw limitReached(window, this.limits[window], period.endsAt, now);
      }
      taken.push(period.key);
    }
    return release;
  }

  async stats(userId: string, now = new Date()): Promise<RateLimitStats> {
    const counts = await Promise.all(WINDOWS.map((window) => this.usage.count(periodOf(userId, window, now).key)));
    return limitStats(Object.fromEntries(WINDOWS.map((window, i) => [window, counts[i]!])) as Record<LimitWindow, number>, this.limits);
  }

  async deleteExpired(now = new Date()): Promise<void> {
    await this.usage.deleteExpired(now);
  }
}
