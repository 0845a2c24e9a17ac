import type { RateLimitStats } from '@mkt/contracts';
import { isDuplicateKey, RateLimited } from '@mkt/kit';
import { Usage } from '../db/records.model';
import { periodOf, secondsUntil, WINDOWS, type LimitWindow, type WindowPeriod } from './limits';

export type LimitSettings = Record<LimitWindow, number>;

const counterId = (userId: string, period: WindowPeriod) => `${userId}:${period.window}:${period.key}`;

/**
 * Top-ups and payout requests count against a user's daily, weekly and monthly windows. A
 * place is reserved in all three before the work (atomically: the guard `count < limit` is in
 * the filter, and at the limit the upsert collides with the existing counter), and given back
 * when the work fails, so a refused request never counts.
 */
export class Limits {
  constructor(private readonly limits: LimitSettings) {}

  async reserve(userId: string, now = new Date()): Promise<() => Promise<void>> {
    const taken: string[] = [];
    const release = async () => {
      for (const id of taken) await Usage.updateOne({ _id: id }, { $inc: { count: -1 } });
    };
    for (const window of WINDOWS) {
      const period = periodOf(window, now);
      const id = counterId(userId, period);
      if (!(await this.take(id, this.limits[window], period.endsAt))) {
        await release();
        throw new RateLimited(secondsUntil(period.endsAt, now), `The ${window} limit of ${this.limits[window]} requests is reached`);
      }
      taken.push(id);
    }
    return release;
  }

  async stats(userId: string, now = new Date()): Promise<RateLimitStats> {
    const entries = await Promise.all(
      WINDOWS.map(async (window) => {
        const counter = await Usage.findById(counterId(userId, periodOf(window, now))).lean();
        const count = counter?.count ?? 0;
        const limit = this.limits[window];
        return [window, { count, limit, remaining: Math.max(0, limit - count) }] as const;
      }),
    );
    return Object.fromEntries(entries) as RateLimitStats;
  }

  async deleteExpired(now = new Date()): Promise<void> {
    await Usage.deleteMany({ expiresAt: { $lt: now } });
  }

  private async take(id: string, limit: number, endsAt: Date): Promise<boolean> {
    if (limit <= 0) return false;
    try {
      await Usage.findOneAndUpdate(
        { _id: id, count: { $lt: limit } },
        { $inc: { count: 1 }, $setOnInsert: { expiresAt: endsAt } },
        { upsert: true },
      );
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }
}
